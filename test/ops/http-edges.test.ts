import { request as httpRequest } from 'node:http';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { openStore } from '../../core/store.ts';
import { MintLimiter } from '../../plugins/registry/auth/mint-limit.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';

// Issue 13 items 10 and 11 (part): errors that escaped {detail, code}, and the smaller holes.

function expectShape(t: Test, body: string, code: string, what: string) {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  t.same(Object.keys(parsed).sort(), ['code', 'detail'], `${what}: exactly {detail, code}`);
  t.equal(parsed.code, code, `${what}: code`);
  return parsed.detail;
}

t.test('router errors answer {detail, code}', async (t) => {
  const app = await makeApp(t);
  const bad = await app.inject({ method: 'GET', url: '/api/v1/memory/%E0%A4%A' });
  t.equal(bad.statusCode, 400, 'malformed percent-encoding');
  t.match(expectShape(t, bad.body, 'SB_ERR_BAD_URL', 'bad url'), /percent-encoding/);
  t.ok(bad.headers['x-request-id'], 'the request id is still echoed');

  const long = await app.inject({ method: 'GET', url: `/api/v1/memory/${'x'.repeat(10_000)}` });
  t.equal(long.statusCode, 414, 'a 10,000-character path parameter');
  const detail = expectShape(t, long.body, 'SB_ERR_PATH_PARAM_TOO_LONG', 'long param') as string;
  t.match(detail, /longer than 100 characters/);
  t.ok(detail.length < 400, 'the detail does not echo the whole path');
});

t.test('HTTP-parser errors (oversized URL or headers) answer {detail, code} on the wire', async (t) => {
  const app = await makeApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const send = (path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }));
      });
      req.on('error', reject);
      req.end();
    });
  const url = await send(`/api/servers?q=${'a'.repeat(20_000)}`);
  t.equal(url.status, 431, 'an oversized URL');
  t.match(url.type, /^application\/json/);
  t.match(expectShape(t, url.body, 'SB_ERR_HEADERS_TOO_LARGE', 'oversized URL'), /larger than \d+ bytes/);
  const header = await send('/healthz', { 'x-big': 'b'.repeat(20_000) });
  t.equal(header.status, 431, 'an oversized header');
  expectShape(t, header.body, 'SB_ERR_HEADERS_TOO_LARGE', 'oversized header');
  t.equal((await send('/healthz')).status, 200, 'the server still answers');
});

t.test('invalid JSON: 422 on the registry (spec 7), 400 kept on the platform', async (t) => {
  const app = await makeApp(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...admin, 'content-type': 'application/json' },
    payload: '{"name": "x",',
  });
  t.equal(reg.statusCode, 422);
  const detail = expectShape(t, reg.body, 'SB_ERR_MALFORMED_JSON', 'registry') as Array<{
    loc: unknown[];
    msg: string;
    type: string;
  }>;
  t.same(detail[0].loc, ['body']);
  t.equal(detail[0].type, 'json_invalid');
  t.match(detail[0].msg, /JSON/, 'the parser says what is wrong');
  const skills = await app.inject({
    method: 'POST',
    url: '/api/skills',
    headers: { ...admin, 'content-type': 'application/json' },
    payload: 'nope',
  });
  t.equal(skills.statusCode, 422, 'every registry route');
  const plat = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/ns',
    headers: { 'content-type': 'application/json' },
    payload: '{"content": ',
  });
  t.equal(plat.statusCode, 400);
  expectShape(t, plat.body, 'SB_ERR_MALFORMED_JSON', 'platform');
});

t.test('413 states the limit in bytes; 415 says application/json and what the route takes', async (t) => {
  const app = await makeApp(t, { body_limit_bytes: 4096 });
  const big = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/ns',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ content: 'x'.repeat(5000) }),
  });
  t.equal(big.statusCode, 413);
  t.match(expectShape(t, big.body, 'SB_ERR_BODY_TOO_LARGE', '413'), /4096 bytes/);
  const yaml = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/ns',
    headers: { 'content-type': 'application/x-yaml' },
    payload: 'content: x',
  });
  t.equal(yaml.statusCode, 415);
  const d = expectShape(t, yaml.body, 'SB_ERR_UNSUPPORTED_MEDIA_TYPE', '415') as string;
  t.match(d, /application\/x-yaml/);
  t.match(d, /application\/json/);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { ...admin, 'content-type': 'text/csv' },
    payload: 'a,b',
  });
  t.equal(login.statusCode, 415);
  t.match(
    login.json().detail,
    /also accepts application\/x-www-form-urlencoded/,
    'the types a route documents are listed',
  );
});

t.test('a wrong method on a known path is 405 with Allow, for every route', async (t) => {
  const routes: RouteOptions[] = [];
  const app = await makeApp(
    t,
    {},
    { beforeSurfaces: (a: FastifyInstance) => void a.addHook('onRoute', (r) => void routes.push(r)) },
  );
  t.ok(routes.length > 100, `the route table was seen (${routes.length} routes)`);
  let checked = 0;
  for (const r of routes) {
    const path = r.url.replace(/:[^/]+/g, 'x').replace(/\*$/, 'x');
    const method = ['PATCH', 'PUT', 'DELETE', 'POST', 'GET'].find(
      (m) => !app.findRoute({ method: m as 'GET', url: path }),
    );
    if (!method) continue;
    const res = await app.inject({ method: method as 'GET', url: path });
    checked++;
    t.equal(res.statusCode, 405, `${method} ${path}`);
    const allow = String(res.headers.allow).split(', ');
    const own = (Array.isArray(r.method) ? r.method : [r.method]).filter((m) =>
      app.findRoute({ method: m, url: path }),
    );
    for (const m of own) t.ok(allow.includes(m), `${method} ${path}: Allow lists ${m}`);
    t.notOk(allow.includes(method), `${method} ${path}: Allow does not list the refused method`);
    expectShape(t, res.body, 'SB_ERR_METHOD_NOT_ALLOWED', `${method} ${path}`);
  }
  t.ok(checked > 100, `${checked} routes checked`);
  const none = await app.inject({ method: 'GET', url: '/no/such/path' });
  t.equal(none.statusCode, 404, 'an unknown path is still a 404');
  t.notOk(none.headers.allow);
});

t.test('/api/health/ws/stats requires credentials', async (t) => {
  const app = await makeApp(t);
  const anon = await app.inject({ method: 'GET', url: '/api/health/ws/stats' });
  t.equal(anon.statusCode, 401);
  t.same(Object.keys(anon.json()).sort(), ['code', 'detail']);
  const user = await asUser(app, ['mcp-registry-user'], 'u');
  const ok = await app.inject({ method: 'GET', url: '/api/health/ws/stats', headers: user });
  t.equal(ok.statusCode, 200);
  t.type(ok.json().active_connections, 'number');
});

t.test('the SQLite store and its -wal/-shm files are owner-only (0600)', async (t) => {
  const dir = tempDir();
  const store = await openStore({ backend: 'sqlite', dataDir: dir });
  await store.collection('c').set('k', { v: 1 });
  for (const f of ['switchboard.db', 'switchboard.db-wal', 'switchboard.db-shm']) {
    t.equal(statSync(join(dir, f)).mode & 0o777, 0o600, f);
  }
  await store.close();
  const old = tempDir();
  writeFileSync(join(old, 'switchboard.db'), '', { mode: 0o644 });
  const reopened = await openStore({ backend: 'sqlite', dataDir: old });
  await reopened.collection('c').set('k', 1);
  t.equal(
    statSync(join(old, 'switchboard.db')).mode & 0o777,
    0o600,
    'a file left 0644 by an older version is tightened',
  );
  await reopened.close();
});

t.test('the token-mint 429 carries Retry-After: seconds until a slot frees', async (t) => {
  const store = await openStore({ backend: 'memory' });
  const limiter = new MintLimiter(store, 2);
  const t0 = 1_000_000_000;
  await limiter.take('u', t0);
  await limiter.take('u', t0 + 600_000);
  const err = await limiter.take('u', t0 + 900_000).then(
    () => undefined,
    (e: { statusCode: number; headers?: Record<string, string> }) => e,
  );
  t.equal(err?.statusCode, 429);
  t.equal(err?.headers?.['retry-after'], String(3600 - 900), 'the oldest mint leaves the hour in 2700 s');

  const app = await makeApp(t, { registry: { token_mint_limit_per_hour: 1 } });
  const h = await asUser(app, ['mcp-registry-user'], 'lim');
  t.equal((await app.inject({ method: 'POST', url: '/api/tokens/generate', headers: h, payload: {} })).statusCode, 200);
  const res = await app.inject({ method: 'POST', url: '/api/tokens/generate', headers: h, payload: {} });
  t.equal(res.statusCode, 429);
  const retry = Number(res.headers['retry-after']);
  t.ok(retry > 3500 && retry <= 3600, `Retry-After over HTTP: ${res.headers['retry-after']}`);
  t.match(res.json().detail, new RegExp(`try again in ${retry} s`), 'the detail and the header agree');
});

t.test('a server path parameter holding a stray % (after the router decoded it) is a 404, not a 500', async (t) => {
  // Found by test/fuzz/routes.test.ts: the registry decoded the parameter a second time and threw URIError.
  const app = await makeApp(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  for (const [method, url] of [
    ['PUT', '/api/servers/%2C%25%F0%9D%AA%8B/credentials'],
    ['GET', '/api/servers/a%25zz'],
    ['POST', '/api/refresh/a%25zz'],
  ] as const) {
    const res = await app.inject({
      method,
      url,
      headers: admin,
      payload: method === 'GET' ? undefined : { auth_scheme: 'none' },
    });
    t.equal(res.statusCode, 404, `${method} ${url}`);
    t.equal(res.json().code, 'SB_ERR_REGISTRY_SERVER_NOT_FOUND');
  }
});
