import { fetch as undiciFetch, request, type Dispatcher } from 'undici';
import { addressRefusal } from '../../../core/address-guard.ts';
import type { JsonSchemaValidatorResult, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

// The MCP SDK client (with zod) costs ~25 MB and ~150 ms to load: imported on the first probe, not at startup.
type Sdk = typeof import('@modelcontextprotocol/sdk/client/index.js') &
  typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js') &
  typeof import('@modelcontextprotocol/sdk/client/sse.js');
let sdk: Sdk | undefined;
async function loadSdk(): Promise<Sdk> {
  if (!sdk) {
    const [c, h, e] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/client/sse.js'),
    ]);
    sdk = { ...c, ...h, ...e };
  }
  return sdk;
}

export interface ProbeTarget {
  /** The MCP endpoint to talk to (already resolved from proxy_pass_url / mcp_endpoint / sse_endpoint). */
  url: string;
  transport: 'streamable-http' | 'sse';
  /** Custom headers plus the decrypted backend credential header; held in memory only. */
  headers: Record<string, string>;
  timeoutMs: number;
  /**
   * Where connections are made: the backend guard's pinned dispatcher, which
   * judges each connection's address at connect time (redirects included).
   */
  dispatcher?: Dispatcher;
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
  if (sdk && (err instanceof sdk.StreamableHTTPError || err instanceof sdk.SseError))
    return typeof err.code === 'number' && err.code > 0 ? err.code : undefined;
  return undefined;
}

/** Map any failure of initialize/tools/list to one of the health strings of the registry spec. */
export function classify(err: unknown): ProbeResult {
  if (err instanceof ProbeTimeout) return { status: 'unhealthy: timeout', reason: 'no answer within the timeout' };
  // Refused at connect time: the name now resolves somewhere the guard refuses (re-pointed, or rebinding).
  const refused = addressRefusal(err);
  if (refused) return { status: `unhealthy: blocked address (${refused.addressClass})`, reason: refused.message };
  const code = statusOf(err);
  if (code === 401 || code === 403) return { status: 'auth-expired', reason: `backend answered ${code}` };
  if (code !== undefined) return { status: `unhealthy: status ${code}`, reason: (err as Error).message.slice(0, 200) };
  const msg = err instanceof Error ? `${err.message} ${(err.cause as Error | undefined)?.message ?? ''}` : String(err);
  // SSE errors carry the status only in the message: "Non-200 status code (401)" on connect, "(HTTP 401)" on a POST.
  const sse = /status code \((\d{3})\)|\(HTTP (\d{3})\)/i.exec(msg);
  if (sse) {
    const c = Number(sse[1] ?? sse[2]);
    return c === 401 || c === 403
      ? { status: 'auth-expired', reason: `backend answered ${c}` }
      : { status: `unhealthy: status ${c}`, reason: msg.slice(0, 200) };
  }
  return { status: 'unhealthy: connection error', reason: msg.trim().slice(0, 200) };
}

/**
 * The streamable HTTP transport's fetch, on undici.request: a probe is four
 * small exchanges (initialize, initialized, tools/list, session end), and
 * WHATWG fetch costs about twice the CPU per exchange, which a sweep of
 * hundreds of servers pays beside the API. Answers are read whole (a POST's
 * event stream ends with its response). The optional GET stream the SDK opens
 * after `initialized` is answered 405 here, as by a server without one: a
 * probe needs no server-initiated messages, so no stream is held open.
 */
const probeFetch =
  (dispatcher: Dispatcher | undefined): typeof fetch =>
  async (input, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method === 'GET') return new Response(null, { status: 405 });
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const res = await request(input instanceof Request ? input.url : input.toString(), {
      method: method as Dispatcher.HttpMethod,
      headers,
      body: typeof init?.body === 'string' ? init.body : undefined,
      signal: init?.signal ?? undefined,
      dispatcher,
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
    const body = Buffer.from(await res.body.arrayBuffer());
    const empty = body.length === 0 || res.statusCode === 204 || res.statusCode === 304;
    return new Response(empty ? null : body, { status: res.statusCode, headers: out });
  };

/** WHATWG fetch through the given dispatcher (the SSE transport's stream and posts). */
function fetchVia(dispatcher: Dispatcher | undefined): typeof fetch {
  if (!dispatcher) return fetch;
  return (input, init) =>
    undiciFetch(input as never, { ...(init as object), dispatcher } as never) as unknown as Promise<Response>;
}

/**
 * A probe never calls a tool, so the client's validation of tool results is
 * never used; by default the SDK builds an Ajv instance per client and compiles
 * every listed tool's outputSchema, which made up a good part of a check's CPU.
 */
const unusedResultValidation: jsonSchemaValidator = {
  getValidator<T>() {
    return (input: unknown): JsonSchemaValidatorResult<T> => ({
      valid: true,
      data: input as T,
      errorMessage: undefined,
    });
  },
};

/**
 * MCP `initialize` then `tools/list` with the official SDK client, bounded by a
 * timeout that also aborts the underlying HTTP requests.
 */
export async function probe(target: ProbeTarget): Promise<ProbeResult> {
  const { Client, StreamableHTTPClientTransport, SSEClientTransport } = await loadSdk();
  const abort = new AbortController();
  const requestInit: RequestInit = { headers: target.headers, signal: abort.signal };
  const url = new URL(target.url);
  const sseFetch = fetchVia(target.dispatcher);
  const transport =
    target.transport === 'sse'
      ? // The SDK adds requestInit's headers to the event stream request itself; only the abort signal has to be passed on.
        new SSEClientTransport(url, {
          requestInit,
          fetch: sseFetch,
          eventSourceInit: { fetch: (u, init) => sseFetch(u, { ...init, signal: abort.signal }) },
        })
      : new StreamableHTTPClientTransport(url, { requestInit, fetch: probeFetch(target.dispatcher) });
  const client = new Client(
    { name: 'switchboard-health', version: '0.1.0' },
    { capabilities: {}, jsonSchemaValidator: unusedResultValidation },
  );
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
      // A server without the tools capability (prompts or resources only) is healthy with no tools.
      if (client.getServerCapabilities()?.tools) {
        // Follow pagination so servers with many tools are fully discovered.
        do {
          const page = await client.listTools(cursor ? { cursor } : {});
          for (const t of page.tools)
            tools.push({
              name: t.name,
              description: t.description ?? '',
              inputSchema: (t.inputSchema ?? {}) as Record<string, unknown>,
            });
          cursor = page.nextCursor;
        } while (cursor);
      }
      // Ends the backend's session now rather than leaving one behind per probe (servers may keep them forever).
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId)
        await transport.terminateSession().catch(() => {});
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
