import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';

export interface ProbeTarget {
  /** The MCP endpoint to talk to (already resolved from proxy_pass_url / mcp_endpoint / sse_endpoint). */
  url: string;
  transport: 'streamable-http' | 'sse';
  /** Custom headers plus the decrypted backend credential header; held in memory only. */
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface DiscoveredTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ProbeResult {
  /** `healthy`, `auth-expired`, `unhealthy: timeout`, `unhealthy: connection error`, `unhealthy: status <code>` */
  status: string;
  tools?: DiscoveredTool[];
  /** Why a probe failed, for logs (never contains the credential). */
  reason?: string;
}

class ProbeTimeout extends Error {}

function statusOf(err: unknown): number | undefined {
  if (err instanceof StreamableHTTPError || err instanceof SseError) return typeof err.code === 'number' && err.code > 0 ? err.code : undefined;
  return undefined;
}

/** Map any failure of initialize/tools/list to one of the health strings of the registry spec. */
export function classify(err: unknown): ProbeResult {
  if (err instanceof ProbeTimeout) return { status: 'unhealthy: timeout', reason: 'no answer within the timeout' };
  const code = statusOf(err);
  if (code === 401 || code === 403) return { status: 'auth-expired', reason: `backend answered ${code}` };
  if (code !== undefined) return { status: `unhealthy: status ${code}`, reason: (err as Error).message.slice(0, 200) };
  const msg = err instanceof Error ? `${err.message} ${(err.cause as Error | undefined)?.message ?? ''}` : String(err);
  // SSE connect errors carry the status only in the message ("Non-200 status code (401)").
  const sse = /status code \((\d{3})\)/i.exec(msg);
  if (sse) {
    const c = Number(sse[1]);
    return c === 401 || c === 403 ? { status: 'auth-expired', reason: `backend answered ${c}` } : { status: `unhealthy: status ${c}`, reason: msg.slice(0, 200) };
  }
  return { status: 'unhealthy: connection error', reason: msg.trim().slice(0, 200) };
}

/**
 * MCP `initialize` then `tools/list` with the official SDK client, bounded by a
 * timeout that also aborts the underlying HTTP requests.
 */
export async function probe(target: ProbeTarget): Promise<ProbeResult> {
  const abort = new AbortController();
  const requestInit: RequestInit = { headers: target.headers, signal: abort.signal };
  const url = new URL(target.url);
  const transport =
    target.transport === 'sse'
      ? new SSEClientTransport(url, { requestInit, eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...target.headers }, signal: abort.signal }) } })
      : new StreamableHTTPClientTransport(url, { requestInit });
  const client = new Client({ name: 'switchboard-health', version: '0.1.0' }, { capabilities: {} });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new ProbeTimeout());
    }, target.timeoutMs);
  });
  try {
    const run = (async () => {
      await client.connect(transport);
      const tools: DiscoveredTool[] = [];
      let cursor: string | undefined;
      // Follow pagination so servers with many tools are fully discovered.
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        for (const t of page.tools) tools.push({ name: t.name, description: t.description ?? '', inputSchema: (t.inputSchema ?? {}) as Record<string, unknown> });
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    })();
    run.catch(() => {});
    const tools = await Promise.race([run, timeout]);
    return { status: 'healthy', tools };
  } catch (err) {
    return classify(err);
  } finally {
    clearTimeout(timer);
    abort.abort();
    await client.close().catch(() => {});
  }
}
