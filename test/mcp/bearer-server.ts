import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { readJsonBody } from '../fixtures/json-body.ts';
import { listenLoopback } from '../fixtures/loopback.ts';

export interface BearerServer {
  url: string;
  /** Change the token the server accepts (to make a stored credential go stale). */
  setToken(token: string): void;
  /** Headers of every request the server received, for asserting what was injected. */
  seen: Array<Record<string, string | string[] | undefined>>;
  stop(): Promise<void>;
}

/**
 * A small MCP server built with the SDK, over streamable HTTP, that answers
 * 401 unless the request carries `Authorization: Bearer <token>`.
 */
export async function startBearerServer(initialToken: string): Promise<BearerServer> {
  let token = initialToken;
  const seen: BearerServer['seen'] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const makeServer = () => {
    const server = new McpServer({ name: 'bearer-test', version: '1.0.0' });
    server.tool('add', 'Add two numbers', { a: z.number(), b: z.number() }, async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }));
    server.tool('secret_echo', 'Echo a message', { message: z.string() }, async ({ message }) => ({
      content: [{ type: 'text', text: message }],
    }));
    return server;
  };

  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    seen.push({ ...req.headers });
    if (req.headers.authorization !== `Bearer ${token}`) {
      res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
        .end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    try {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
      if (!transport) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, transport!);
          },
        });
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  const base = await listenLoopback(http);
  return {
    url: `${base}/mcp`,
    setToken: (t) => (token = t),
    seen,
    stop: () =>
      new Promise<void>((r) => {
        for (const t of sessions.values()) void t.close();
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}
