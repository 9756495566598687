import t, { type Test } from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import { redisReplicas } from '../fixtures/redis-server.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';
import { listenOnLoopback as listen } from '../helpers/registry-servers.ts';

/**
 * The gateway keeps each server's backend view (URL, headers with the
 * decrypted credential) between calls. These tests change the server between
 * two proxied calls and check that the very next call sees the change.
 */

/** A backend that records the headers of each call and answers every JSON-RPC request with `result: { backend: name }`. */
async function namedBackend(t: Test, name: string) {
  const seen: Array<IncomingMessage['headers']> = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    seen.push(req.headers);
    const id = (JSON.parse(body) as { id?: unknown }).id ?? null;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id, result: { backend: name } }));
  });
  return { url: await listen(t, server), seen };
}

async function gatewayApp(t: Test, opts: Parameters<typeof makeApp>[2] = {}) {
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 2 } } }, opts);
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.server.closeAllConnections());
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const call = async (id: number) => {
    const res = await fetch(`${base}/cached/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...admin },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }),
    });
    return { status: res.status, body: (await res.json()) as { result?: { backend?: string }; code?: string } };
  };
  return { app, admin, call };
}

t.test('a credential rotation, a new backend URL and a toggle apply to the next proxied call', async (t) => {
  const one = await namedBackend(t, 'one');
  const two = await namedBackend(t, 'two');
  const { app, admin, call } = await gatewayApp(t);
  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: {
      name: 'Cached',
      description: 'cache test',
      path: '/cached',
      proxy_pass_url: one.url,
      auth_scheme: 'api_key',
      auth_credential: 'key-1',
    },
  });
  t.equal(reg.statusCode, 201, reg.body);

  t.match(await call(1), { status: 200, body: { result: { backend: 'one' } } });
  t.match(await call(2), { status: 200, body: { result: { backend: 'one' } } }, 'a second call is served the same way');
  t.equal(one.seen.at(-1)?.['x-api-key'], 'key-1');

  const rotated = await app.inject({
    method: 'PATCH',
    url: '/api/servers/cached/auth-credential',
    headers: admin,
    payload: { auth_scheme: 'api_key', auth_credential: 'key-2' },
  });
  t.equal(rotated.statusCode, 200, rotated.body);
  t.match(await call(3), { status: 200 });
  t.equal(one.seen.at(-1)?.['x-api-key'], 'key-2', 'the rotated credential is injected at once');

  const moved = await app.inject({
    method: 'PUT',
    url: '/api/servers/cached',
    headers: admin,
    payload: { name: 'Cached', description: 'cache test', proxy_pass_url: two.url },
  });
  t.equal(moved.statusCode, 200, moved.body);
  t.match(await call(4), { status: 200, body: { result: { backend: 'two' } } }, 'the new backend URL is used at once');
  t.equal(two.seen.at(-1)?.['x-api-key'], 'key-2', 'the credential follows the server to its new backend');

  const off = await app.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: admin,
    payload: { path: '/cached', new_state: false },
  });
  t.equal(off.statusCode, 200, off.body);
  const before = two.seen.length;
  t.match(
    await call(5),
    { status: 403, body: { code: 'SB_ERR_GATEWAY_DISABLED' } },
    'a server disabled after use is refused at once',
  );
  t.equal(two.seen.length, before, 'nothing reached the backend');

  const on = await app.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: admin,
    payload: { path: '/cached', new_state: true },
  });
  t.equal(on.statusCode, 200, on.body);
  t.match(await call(6), { status: 200, body: { result: { backend: 'two' } } });

  const removed = await app.inject({ method: 'DELETE', url: '/api/servers/cached', headers: admin });
  t.ok(removed.statusCode < 300, removed.body);
  t.match(
    await call(7),
    { status: 404, body: { code: 'SB_ERR_GATEWAY_UNKNOWN_SERVER' } },
    'a removed server is unknown at once',
  );
});

t.test('small complete answers and large ones pass through intact', async (t) => {
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { blob: 'x'.repeat(2 * 1024 * 1024) } });
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    const id = (JSON.parse(body) as { id: number }).id;
    if (id === 1)
      return res
        .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(big) })
        .end(big);
    // No content-length: chunked, so the gateway must pipe it.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"jsonrpc":"2.0",');
    res.end(`"id":${id},"result":{"chunked":true}}`);
  });
  const url = await listen(t, server);
  const { app, admin } = await gatewayApp(t);
  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: { name: 'Sizes', description: 'sizes', path: '/sizes', proxy_pass_url: url },
  });
  t.equal(reg.statusCode, 201, reg.body);
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const post = (id: number) =>
    fetch(`${base}/sizes/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...admin },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }),
    });

  const large = await post(1);
  t.equal(large.status, 200);
  t.equal(await large.text(), big, 'a 2 MiB answer arrives byte for byte');
  const chunked = await post(2);
  t.equal(chunked.status, 200);
  t.same(await chunked.json(), { jsonrpc: '2.0', id: 2, result: { chunked: true } });
});

t.test(
  "Redis replicas: a credential rotated on one replica is injected by the other one's gateway at once",
  async (t) => {
    // Replica B learns of A's write by reloading the collection (no change event there), so its cached entry must go with the old record.
    const url = 'redis://127.0.0.1:6379/11';
    const stores = await redisReplicas(t, url, ['registry_servers', 'registry_generation_counters']);
    if (!stores) return;
    const [s1, s2] = stores;
    const backend = await namedBackend(t, 'one');
    const dataDir = tempDir();
    const a = await gatewayApp(t, { store: s1, env: { DATA_DIR: dataDir } });
    const b = await gatewayApp(t, { store: s2, env: { DATA_DIR: dataDir } });
    const reg = await a.app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: a.admin,
      payload: {
        name: 'Cached',
        description: 'cache test',
        path: '/cached',
        proxy_pass_url: backend.url,
        auth_scheme: 'api_key',
        auth_credential: 'key-1',
      },
    });
    t.equal(reg.statusCode, 201, reg.body);
    t.match(await b.call(1), { status: 200, body: { result: { backend: 'one' } } });
    t.equal(backend.seen.at(-1)?.['x-api-key'], 'key-1', 'replica B injects the credential A stored');

    const rotated = await a.app.inject({
      method: 'PATCH',
      url: '/api/servers/cached/auth-credential',
      headers: a.admin,
      payload: { auth_scheme: 'api_key', auth_credential: 'key-2' },
    });
    t.equal(rotated.statusCode, 200, rotated.body);
    t.match(await b.call(2), { status: 200 });
    t.equal(backend.seen.at(-1)?.['x-api-key'], 'key-2', 'replica B injects the rotated credential on its next call');

    const off = await a.app.inject({
      method: 'POST',
      url: '/api/servers/toggle',
      headers: a.admin,
      payload: { path: '/cached', new_state: false },
    });
    t.equal(off.statusCode, 200, off.body);
    t.match(
      await b.call(3),
      { status: 403, body: { code: 'SB_ERR_GATEWAY_DISABLED' } },
      'and refuses the server A disabled',
    );
  },
);
