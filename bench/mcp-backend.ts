/**
 * A small MCP backend built with the SDK (one `add` tool), run as a child process by the gateway and tools
 * benches. It answers JSON (no SSE framing) so both paths are plain request/response.
 */
export const MCP_ADD_BACKEND = `
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
const sessions = new Map();
const http = createServer(async (req, res) => {
  if (req.url === '/healthz') return res.end('ok');
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  const sid = req.headers['mcp-session-id'];
  let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
  if (!transport) {
    transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true, onsessioninitialized: (id) => sessions.set(id, transport) });
    const server = new McpServer({ name: 'bench-fast', version: '1.0.0' });
    server.tool('add', 'Add two numbers', { a: z.number(), b: z.number() }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
    await server.connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
http.listen(Number(process.env.PORT), '127.0.0.1');
`;
