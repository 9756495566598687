import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { readJsonBody } from '../fixtures/json-body.ts';
import { listenLoopback } from '../fixtures/loopback.ts';

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[] };
}

/** How the server behaves; tests change it between checks. */
export interface Behaviour {
  /** Tools listed; with none, the server does not declare the tools capability. */
  tools: ToolSpec[];
  /** Refuse every request whose `header` is not `value`, with `status`. */
  auth?: { header: string; value: string; status: 401 | 403 };
  /** Answer every request with this status and no MCP at all. */
  failStatus?: number;
  /** Accept connections and never answer. */
  hang?: boolean;
  /** Hold each `initialize` this long before answering. */
  initDelayMs: number;
}

export interface SeenRequest {
  method: string;
  /** Path without the query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** JSON-RPC method of a POST body, when there is one. */
  rpc?: string;
}

export interface ControlledServer {
  /** `http://127.0.0.1:<port>`; streamable HTTP on any path, SSE on any path ending in `/sse` (messages at `<prefix>/messages`). */
  base: string;
  behaviour: Behaviour;
  seen: SeenRequest[];
  /** `initialize` requests being held or answered right now, and the most seen at once. */
  inFlight(): number;
  maxInFlight(): number;
  /** How many `initialize` requests arrived (one per health probe). */
  initializeCount(): number;
  stop(): Promise<void>;
}

/**
 * A real MCP server (the SDK's low-level Server) over streamable HTTP and SSE
 * whose answers a test controls: tools, credential check, failure status,
 * hanging, slow initialize. It records every request it receives and counts
 * concurrent initializes, so tests can assert what the health checker sent and
 * how many probes it ran at once.
 */
export async function startControlledServer(initial: Partial<Behaviour> = {}, port = 0): Promise<ControlledServer> {
  const behaviour: Behaviour = { tools: [], initDelayMs: 0, ...initial };
  const seen: SeenRequest[] = [];
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  let inFlight = 0;
  let maxInFlight = 0;
  let initializes = 0;

  const mcpServer = () => {
    // Capabilities are fixed per session: each probe opens a new one, so it sees the behaviour of its time.
    const tools = behaviour.tools.map((t) => ({ ...t }));
    const server = new Server(
      { name: 'controlled', version: '1.0.0' },
      { capabilities: tools.length ? { tools: {} } : {} },
    );
    if (tools.length) server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    return server;
  };

  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
    const rpc =
      body && typeof body === 'object' && !Array.isArray(body) ? (body as { method?: string }).method : undefined;
    seen.push({ method: req.method ?? '', path: url.pathname, headers: { ...req.headers }, rpc });
    if (behaviour.hang) return;
    if (behaviour.failStatus)
      return void res.writeHead(behaviour.failStatus, { 'content-type': 'text/plain' }).end('failing on purpose');
    const auth = behaviour.auth;
    if (auth && req.headers[auth.header.toLowerCase()] !== auth.value) {
      return void res
        .writeHead(auth.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'credential refused' }));
    }
    if (rpc === 'initialize') {
      initializes++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.once('close', () => inFlight--);
      if (behaviour.initDelayMs > 0) await new Promise((r) => setTimeout(r, behaviour.initDelayMs));
    }
    try {
      if (req.method === 'GET' && url.pathname.endsWith('/sse')) {
        const transport = new SSEServerTransport(`${url.pathname.slice(0, -'/sse'.length)}/messages`, res);
        sse.set(transport.sessionId, transport);
        res.once('close', () => sse.delete(transport.sessionId));
        await mcpServer().connect(transport);
        return;
      }
      if (req.method === 'POST' && url.pathname.endsWith('/messages')) {
        const transport = sse.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) return void res.writeHead(404).end('no such SSE session');
        await transport.handlePostMessage(req, res, body);
        return;
      }
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? streamable.get(sid) : undefined;
      if (!transport) {
        if (rpc !== 'initialize')
          return void res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id) => void streamable.set(id, created),
        });
        created.onclose = () => created.sessionId && streamable.delete(created.sessionId);
        await mcpServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  const base = await listenLoopback(http, port);
  return {
    base,
    behaviour,
    seen,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    initializeCount: () => initializes,
    stop: () =>
      new Promise<void>((r) => {
        for (const t of [...streamable.values(), ...sse.values()]) void t.close();
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}
