import { randomBytes } from 'node:crypto';
import { mintSelfToken } from '../plugins/registry/auth/self-tokens.ts';
import { load, type BenchModule, type BenchRow, type LoadResult } from './harness.ts';
import { startScript, startSwitchboard, type Spawned } from './processes.ts';

/** A small MCP backend built with the SDK, answering JSON (no SSE framing) so both paths are plain request/response. */
const BACKEND = `
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

const ACCEPT = 'application/json, text/event-stream';

/** initialize + notifications/initialized once; returns the session id to reuse under load. */
async function session(url: string, extra: Record<string, string>): Promise<string> {
  const headers = { 'content-type': 'application/json', accept: ACCEPT, ...extra };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
  });
  const sid = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !sid) throw new Error(`initialize at ${url} answered ${init.status}: ${await init.text()}`);
  await init.text();
  const ack = await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': sid }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  await ack.text();
  return sid;
}

const CALL = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'add', arguments: { a: 20, b: 22 } } });

async function checkCall(url: string, headers: Record<string, string>): Promise<void> {
  const r = await fetch(url, { method: 'POST', headers, body: CALL });
  const text = await r.text();
  if (r.status !== 200 || !text.includes('"42"')) throw new Error(`tools/call at ${url} answered ${r.status}: ${text.slice(0, 200)}`);
}

/**
 * `tools/call` of a fast tool through the built-in MCP gateway against the same
 * call made directly to the backend, in one run (the direct call is the baseline).
 */
const bench: BenchModule = async () => {
  const secretKey = randomBytes(32).toString('base64url');
  let backend: Spawned | undefined;
  let sb: Spawned | undefined;
  try {
    backend = await startScript(BACKEND, '/healthz');
    sb = await startSwitchboard({ registry: { health: { interval_seconds: 0 } } }, { SECRET_KEY: secretKey, ADMIN_PASSWORD: randomBytes(12).toString('hex') });
    const token = await mintSelfToken(new TextEncoder().encode(secretKey), { username: 'bench', groups: [], scopes: ['mcp-registry-admin'], expiresInSeconds: 3600 });
    const reg = await fetch(`${sb.base}/api/servers/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Fast', description: 'bench backend', path: '/fast', proxy_pass_url: backend.base }),
    });
    if (reg.status !== 201) throw new Error(`register answered ${reg.status}: ${await reg.text()}`);

    const directUrl = `${backend.base}/mcp`;
    const gatewayUrl = `${sb.base}/fast/mcp`;
    const auth = { 'x-authorization': `Bearer ${token}` };
    const directHeaders = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': await session(directUrl, {}) };
    const gatewayHeaders = { 'content-type': 'application/json', accept: ACCEPT, ...auth, 'mcp-session-id': await session(gatewayUrl, auth) };
    await checkCall(directUrl, directHeaders);
    await checkCall(gatewayUrl, gatewayHeaders);

    const run = (url: string, headers: Record<string, string>, connections: number) => load({ url, method: 'POST', headers, body: CALL, connections });
    // Warm both paths (JIT, connection pools) before measuring.
    await load({ url: directUrl, method: 'POST', headers: directHeaders, body: CALL, duration: 1 });
    await load({ url: gatewayUrl, method: 'POST', headers: gatewayHeaders, body: CALL, duration: 1 });
    const direct1 = await run(directUrl, directHeaders, 1);
    const gateway1 = await run(gatewayUrl, gatewayHeaders, 1);
    const direct = await run(directUrl, directHeaders, 10);
    const gateway = await run(gatewayUrl, gatewayHeaders, 10);

    const errs = (r: LoadResult) => (r.errors || r.non2xx ? `${r.errors} errors, ${r.non2xx} non-2xx` : '');
    const row = (name: string, r: LoadResult, base: LoadResult, goal: string, note: string): BenchRow => ({
      group: 'gateway', name, rps: r.rps, p50_ms: r.p50_ms, p99_ms: r.p99_ms, ratio: base.rps ? r.rps / base.rps : undefined, goal,
      note: [note, errs(r)].filter(Boolean).join('; ') || undefined,
    });
    const added1 = gateway1.p50_ms - direct1.p50_ms;
    const ratio = direct.rps ? gateway.rps / direct.rps : 0;
    return [
      row('tools/call direct to the backend (baseline, 1 connection)', direct1, direct1, 'baseline', ''),
      row('tools/call through the gateway (1 connection)', gateway1, direct1, 'adds < 1 ms at p50', `adds ${added1.toFixed(2)} ms at p50: ${added1 < 1 ? 'met' : 'NOT met'}`),
      row('tools/call direct to the backend (baseline, 10 connections)', direct, direct, 'baseline', ''),
      row('tools/call through the gateway (10 connections)', gateway, direct, '>= 0.8x direct req/s', `${ratio.toFixed(2)}x: ${ratio >= 0.8 ? 'met' : 'NOT met'}`),
    ];
  } finally {
    sb?.stop();
    backend?.stop();
  }
};

export default bench;
