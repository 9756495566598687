import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolAccessDenied, ToolExecutionError, ToolTimeoutError } from '../../core/primitives/tools.ts';

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface McpEndpoint {
  /** The pool key: one session per distinct credential and server. */
  key: string;
  url: string;
  headers: Record<string, string>;
}

export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

export interface PoolOptions {
  timeoutMs: number;
  /** In-process dispatch for the registry link; global fetch otherwise. */
  fetch?: Fetch;
  /** Open sessions kept; the least recently used is closed beyond it. */
  max?: number;
}

const JSON_RPC_TIMEOUT = -32001;

/** `{detail}` of a Switchboard error body quoted in an SDK message, else the message itself. */
function readable(message: string): string {
  const json = message.indexOf('{');
  if (json >= 0) {
    try {
      const body = JSON.parse(message.slice(json)) as { detail?: unknown; code?: unknown };
      if (typeof body.detail === 'string')
        return typeof body.code === 'string' ? `${body.detail} (${body.code})` : body.detail;
    } catch {
      /* not JSON: keep the message */
    }
  }
  return message;
}

/**
 * Turns an SDK failure into the tools primitive's errors: an HTTP 401/403 from
 * the server (or the gateway in front of it) is a refusal, a JSON-RPC request
 * timeout a timeout, anything else a failed execution carrying the MCP message.
 */
export function toolError(err: unknown, tool: string): Error {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === 401 || code === 403) return new ToolAccessDenied(`Calling '${tool}' was refused: ${readable(message)}`);
  if (code === JSON_RPC_TIMEOUT)
    return new ToolTimeoutError(`Tool '${tool}' did not answer in time: ${message}`, { cause: err });
  return new ToolExecutionError(readable(message), { cause: err });
}

/** The text parts of an MCP tool result, joined: what an `isError` result says went wrong. */
export function resultText(result: { content?: unknown }): string {
  const parts = Array.isArray(result.content) ? result.content : [];
  return parts
    .map((p: { type?: string; text?: string }) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : ''))
    .filter(Boolean)
    .join('\n');
}

/**
 * Connected MCP clients (official SDK, streamable HTTP), one per endpoint key,
 * reused across calls: a call then costs one POST instead of the initialize
 * handshake, a notification and a session teardown. The SDK is imported on
 * first use so processes that never call a tool do not load it.
 */
export class McpClientPool {
  private readonly clients = new Map<string, Promise<Client>>();
  private readonly max: number;

  constructor(private readonly opts: PoolOptions) {
    this.max = opts.max ?? 256;
  }

  private async open(ep: McpEndpoint): Promise<Client> {
    const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    const client = new Client({ name: 'switchboard-tools', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(ep.url), {
      requestInit: { headers: ep.headers },
      ...(this.opts.fetch ? { fetch: this.opts.fetch } : {}),
    });
    await client.connect(transport, { timeout: this.opts.timeoutMs });
    return client;
  }

  private client(ep: McpEndpoint): Promise<Client> {
    let c = this.clients.get(ep.key);
    if (c) {
      // Most recently used last, so the first key is the one to close when full.
      this.clients.delete(ep.key);
      this.clients.set(ep.key, c);
      return c;
    }
    c = this.open(ep);
    this.clients.set(ep.key, c);
    c.catch(() => this.clients.get(ep.key) === c && this.clients.delete(ep.key));
    if (this.clients.size > this.max) void this.drop(this.clients.keys().next().value as string);
    return c;
  }

  async drop(key: string): Promise<void> {
    const c = this.clients.get(key);
    this.clients.delete(key);
    await c?.then((x) => x.close()).catch(() => {});
  }

  /** Runs `fn` on the endpoint's session; a session the server no longer knows (404) is reopened once. */
  private async withClient<T>(ep: McpEndpoint, fn: (c: Client) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.client(ep));
    } catch (err) {
      if ((err as { code?: unknown }).code !== 404) throw err;
      await this.drop(ep.key);
      return fn(await this.client(ep));
    }
  }

  async listTools(ep: McpEndpoint): Promise<McpToolInfo[]> {
    return this.withClient(
      ep,
      async (c) => (await c.listTools(undefined, { timeout: this.opts.timeoutMs })).tools as McpToolInfo[],
    );
  }

  /** The tool's result; rejects with ToolAccessDenied, ToolTimeoutError or ToolExecutionError (an `isError` result too). */
  async call(ep: McpEndpoint, tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    let out: Record<string, unknown>;
    try {
      out = (await this.withClient(ep, (c) =>
        c.callTool({ name: tool, arguments: args }, undefined, { timeout: this.opts.timeoutMs }),
      )) as Record<string, unknown>;
    } catch (err) {
      throw toolError(err, tool);
    }
    if (out.isError === true)
      throw new ToolExecutionError(resultText(out) || `Tool '${tool}' reported an error without a message`);
    const { isError: _ignored, ...result } = out;
    return result;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.keys()].map((k) => this.drop(k)));
  }
}
