import t from 'tap';
import { createServer } from 'node:http';
import { probe } from '../../plugins/registry/health/probe.ts';
import { startEverything, freePort } from '../mcp/servers.ts';
import { startBearerServer } from '../mcp/bearer-server.ts';

t.test('a real MCP server over streamable HTTP is healthy and its tools are discovered', async (t) => {
  const srv = await startEverything('streamableHttp');
  t.teardown(() => srv.stop());
  const r = await probe({ url: srv.url, transport: 'streamable-http', headers: {}, timeoutMs: 10000 });
  t.equal(r.status, 'healthy');
  t.ok(r.tools!.length > 3, 'several tools');
  const echo = r.tools!.find((x) => x.name === 'echo');
  t.ok(echo, 'the echo tool is listed');
  t.equal((echo!.inputSchema as { type?: string }).type, 'object');
});

t.test('a real MCP server over SSE is healthy and its tools are discovered', async (t) => {
  const srv = await startEverything('sse');
  t.teardown(() => srv.stop());
  const r = await probe({ url: srv.url, transport: 'sse', headers: {}, timeoutMs: 10000 });
  t.equal(r.status, 'healthy', r.reason ?? 'healthy');
  t.ok(r.tools!.some((x) => x.name === 'echo'));
});

t.test('a backend that rejects the credential is auth-expired; the right one is healthy', async (t) => {
  const srv = await startBearerServer('good-token');
  t.teardown(() => srv.stop());
  const bad = await probe({
    url: srv.url,
    transport: 'streamable-http',
    headers: { authorization: 'Bearer stale' },
    timeoutMs: 5000,
  });
  t.equal(bad.status, 'auth-expired');
  const good = await probe({
    url: srv.url,
    transport: 'streamable-http',
    headers: { authorization: 'Bearer good-token' },
    timeoutMs: 5000,
  });
  t.equal(good.status, 'healthy');
  t.same(good.tools!.map((x) => x.name).sort(), ['add', 'secret_echo']);
});

t.test('nothing listening is a connection error', async (t) => {
  const port = await freePort();
  const r = await probe({
    url: `http://127.0.0.1:${port}/mcp`,
    transport: 'streamable-http',
    headers: {},
    timeoutMs: 5000,
  });
  t.equal(r.status, 'unhealthy: connection error');
});

t.test('a backend that never answers is a timeout; one that fails is its status', async (t) => {
  const hang = createServer(() => {
    /* never answers */
  });
  const fail = createServer((_req, res) => res.writeHead(502).end('bad gateway'));
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => fail.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    hang.closeAllConnections();
    hang.close();
    fail.close();
  });
  const slow = await probe({
    url: `http://127.0.0.1:${(hang.address() as { port: number }).port}/mcp`,
    transport: 'streamable-http',
    headers: {},
    timeoutMs: 300,
  });
  t.equal(slow.status, 'unhealthy: timeout');
  const failed = await probe({
    url: `http://127.0.0.1:${(fail.address() as { port: number }).port}/mcp`,
    transport: 'streamable-http',
    headers: {},
    timeoutMs: 3000,
  });
  t.equal(failed.status, 'unhealthy: status 502');
});
