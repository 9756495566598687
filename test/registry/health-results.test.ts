import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { createServer } from 'node:net';
import { openStore } from '../../core/store.ts';
import { makeApp } from '../helpers/app.ts';
import { registerServer } from '../helpers/registry-servers.ts';
import { randomBytes } from 'node:crypto';
import { adminBasic, asUser } from '../helpers/registry-auth.ts';
import { startControlledServer, type ControlledServer, type ToolSpec } from '../mcp/controlled-server.ts';
import { freePort } from '../mcp/servers.ts';

const ADD: ToolSpec = {
  name: 'add',
  description: 'Add two numbers',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
};
const ECHO: ToolSpec = {
  name: 'echo',
  description: 'Echo a message',
  inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
};

async function setup(t: Test, health: Record<string, unknown> = {}) {
  const store = await openStore({ backend: 'memory' });
  const app = await makeApp(
    t,
    { registry: { health: { interval_seconds: 0, timeout_seconds: 5, ...health } } },
    { store },
  );
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  return { app, admin, store };
}

async function backend(
  t: Test,
  behaviour: Parameters<typeof startControlledServer>[0] = {},
): Promise<ControlledServer> {
  const srv = await startControlledServer(behaviour);
  t.teardown(() => srv.stop());
  return srv;
}

/** Register, then wait for the check a new server gets at once, so later refreshes start from a settled record. */
async function register(
  t: Test,
  app: FastifyInstance,
  admin: Record<string, string>,
  payload: Record<string, unknown>,
) {
  await registerServer(t, app, admin, payload);
  const path = String(payload.path);
  for (let i = 0; i < 200; i++) {
    const s = await app.inject({ method: 'GET', url: `/api/servers${path}`, headers: admin });
    if (s.json().last_checked_iso) return s.json();
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the first check of ${path} never finished`);
}

const refresh = async (app: FastifyInstance, admin: Record<string, string>, path: string) => {
  const res = await app.inject({ method: 'POST', url: `/api/servers${path}/refresh`, headers: admin });
  if (res.statusCode !== 200) throw new Error(`refresh ${path}: ${res.statusCode} ${res.body}`);
  return res.json() as { health_status: string; num_tools: number; tools: ToolSpec[]; last_checked_iso: string };
};

t.test('healthy: tools (name, description, inputSchema) and num_tools are stored and served', async (t) => {
  const { app, admin } = await setup(t);
  const srv = await backend(t, { tools: [ADD, ECHO] });
  await register(t, app, admin, { name: 'Tools', path: '/tools', proxy_pass_url: srv.base });
  const r = await refresh(app, admin, '/tools');
  t.equal(r.health_status, 'healthy');
  t.equal(r.num_tools, 2);
  t.same(r.tools, [ADD, ECHO], 'name, description and inputSchema as the backend listed them');

  const detail = await app.inject({ method: 'GET', url: '/api/servers/tools', headers: admin });
  t.equal(detail.json().num_tools, 2, 'num_tools stored with the server');
  const served = await app.inject({ method: 'GET', url: '/api/tools/tools', headers: admin });
  t.same(
    served.json().tools.map((x: ToolSpec) => [x.name, x.description, x.inputSchema]),
    [ADD, ECHO].map((x) => [x.name, x.description, x.inputSchema]),
  );

  // The backend drops a tool: the next check replaces the list rather than keeping a stale one.
  srv.behaviour.tools = [ECHO];
  t.same(
    (await refresh(app, admin, '/tools')).tools.map((x) => x.name),
    ['echo'],
  );
  srv.behaviour.tools = [];
  const none = await refresh(app, admin, '/tools');
  t.equal(none.health_status, 'healthy', 'a server without the tools capability is healthy');
  t.equal(none.num_tools, 0, 'and has no tools');
});

t.test('auth-expired when the backend refuses the stored credential with 401 or 403', async (t) => {
  const { app, admin } = await setup(t);
  const srv = await backend(t, { tools: [ADD], auth: { header: 'authorization', value: 'Bearer right', status: 401 } });
  await register(t, app, admin, {
    name: 'Locked',
    path: '/locked',
    proxy_pass_url: srv.base,
    auth_scheme: 'bearer',
    auth_credential: 'wrong',
  });
  t.equal((await refresh(app, admin, '/locked')).health_status, 'auth-expired', '401');
  srv.behaviour.auth!.status = 403;
  t.equal((await refresh(app, admin, '/locked')).health_status, 'auth-expired', '403');
  t.ok(
    srv.seen.some((r) => r.headers.authorization === 'Bearer wrong'),
    'the stored credential was what the backend refused',
  );

  const upd = await app.inject({
    method: 'PATCH',
    url: '/api/servers/locked/auth-credential',
    headers: admin,
    payload: { auth_scheme: 'bearer', auth_credential: 'right' },
  });
  t.equal(upd.statusCode, 200, upd.body);
  const back = await refresh(app, admin, '/locked');
  t.equal(back.health_status, 'healthy', 'a credential update and a refresh restore it');
  t.equal(back.num_tools, 1);
});

t.test('unhealthy: timeout, connection error and status <code>', async (t) => {
  const { app, admin } = await setup(t, { timeout_seconds: 2 });
  const srv = await backend(t, { tools: [ADD] });
  await register(t, app, admin, { name: 'Flaky', path: '/flaky', proxy_pass_url: srv.base });
  t.equal((await refresh(app, admin, '/flaky')).health_status, 'healthy');

  srv.behaviour.hang = true;
  t.equal(
    (await refresh(app, admin, '/flaky')).health_status,
    'unhealthy: timeout',
    'no answer within timeout_seconds',
  );
  srv.behaviour.hang = false;

  srv.behaviour.failStatus = 503;
  t.equal((await refresh(app, admin, '/flaky')).health_status, 'unhealthy: status 503');
  srv.behaviour.failStatus = 404;
  t.equal((await refresh(app, admin, '/flaky')).health_status, 'unhealthy: status 404');
  srv.behaviour.failStatus = undefined;

  // A port nobody listens on: refused at once.
  const closed = await freePort();
  await register(t, app, admin, { name: 'Gone', path: '/gone', proxy_pass_url: `http://127.0.0.1:${closed}` });
  t.equal((await refresh(app, admin, '/gone')).health_status, 'unhealthy: connection error');

  // A listener that drops every connection without a word is a connection error too, not a status.
  const rude = createServer((socket) => socket.destroy());
  await new Promise<void>((r) => rude.listen(0, '127.0.0.1', r));
  t.teardown(() => rude.close());
  await register(t, app, admin, {
    name: 'Rude',
    path: '/rude',
    proxy_pass_url: `http://127.0.0.1:${(rude.address() as { port: number }).port}`,
  });
  t.equal((await refresh(app, admin, '/rude')).health_status, 'unhealthy: connection error');

  // Tools found while healthy stay through failures.
  const detail = await app.inject({ method: 'GET', url: '/api/servers/flaky', headers: admin });
  t.equal(detail.json().num_tools, 1);
});

t.test('disabled servers are reported disabled and not probed', async (t) => {
  const { app, admin } = await setup(t);
  const srv = await backend(t, { tools: [ADD] });
  await register(t, app, admin, { name: 'Off', path: '/off', proxy_pass_url: srv.base });
  const off = await app.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: admin,
    payload: { path: '/off', new_state: false },
  });
  t.equal(off.statusCode, 200, off.body);
  const before = srv.initializeCount();
  t.equal((await refresh(app, admin, '/off')).health_status, 'disabled');
  const health = await app.inject({ method: 'GET', url: '/api/servers/health', headers: admin });
  t.equal(health.json().servers['/off'].status, 'disabled');
  t.equal(srv.initializeCount(), before, 'the backend of a disabled server is not contacted');
});

t.test('streamable HTTP honours mcp_endpoint and custom headers; bearer credential as Authorization', async (t) => {
  const { app, admin } = await setup(t);
  const srv = await backend(t, {
    tools: [ADD],
    auth: { header: 'authorization', value: 'Bearer s3cret-bearer', status: 401 },
  });
  await register(t, app, admin, {
    name: 'Custom',
    path: '/custom',
    proxy_pass_url: srv.base,
    mcp_endpoint: `${srv.base}/v2/custom-mcp`,
    headers: { 'X-Team': 'blue', 'X-Trace': 'health' },
    auth_scheme: 'bearer',
    auth_credential: 's3cret-bearer',
  });
  const r = await refresh(app, admin, '/custom');
  t.equal(r.health_status, 'healthy');
  const posts = srv.seen.filter((x) => x.method === 'POST');
  t.ok(posts.length >= 2, 'initialize and tools/list');
  t.ok(
    posts.every((x) => x.path === '/v2/custom-mcp'),
    `every request went to mcp_endpoint (${[...new Set(posts.map((x) => x.path))]})`,
  );
  t.ok(
    posts.every((x) => x.headers['x-team'] === 'blue' && x.headers['x-trace'] === 'health'),
    'custom headers on every request',
  );
  t.ok(
    posts.some((x) => x.rpc === 'tools/list'),
    'tools were listed',
  );
  t.notOk(JSON.stringify(r).includes('s3cret-bearer'), 'the credential is not in the refresh answer');
});

t.test('api_key credential: X-API-Key by default, auth_header_name when set; stored encrypted only', async (t) => {
  const { app, admin, store } = await setup(t);
  const srv = await backend(t, { tools: [ADD], auth: { header: 'x-api-key', value: 'plain-api-key-1', status: 403 } });
  await register(t, app, admin, {
    name: 'Keyed',
    path: '/keyed',
    proxy_pass_url: srv.base,
    auth_scheme: 'api_key',
    auth_credential: 'plain-api-key-1',
  });
  t.equal((await refresh(app, admin, '/keyed')).health_status, 'healthy', 'X-API-Key carried the key');
  t.notOk(
    srv.seen.some((x) => x.headers.authorization),
    'no Authorization header for an api_key credential',
  );

  srv.behaviour.auth = { header: 'x-backend-key', value: 'plain-api-key-2', status: 403 };
  t.equal((await refresh(app, admin, '/keyed')).health_status, 'auth-expired', 'the old header no longer passes');
  const upd = await app.inject({
    method: 'PATCH',
    url: '/api/servers/keyed/auth-credential',
    headers: admin,
    payload: { auth_scheme: 'api_key', auth_credential: 'plain-api-key-2', auth_header_name: 'X-Backend-Key' },
  });
  t.equal(upd.statusCode, 200, upd.body);
  t.equal((await refresh(app, admin, '/keyed')).health_status, 'healthy', 'the named header carried the new key');

  // The plaintext exists only in memory: nowhere in the store, nowhere in what the API returns.
  const stored: string[] = [];
  for await (const [, v] of store.collection<unknown>('registry_servers').entries()) stored.push(JSON.stringify(v));
  t.ok(stored.length > 0);
  t.notOk(stored.join('').includes('plain-api-key'), 'the stored record holds no plaintext credential');
  const detail = await app.inject({ method: 'GET', url: '/api/servers/keyed', headers: admin });
  t.notOk(detail.body.includes('plain-api-key'));
  t.equal(detail.json().auth_credential_encrypted, true);
});

t.test(
  'SSE: supported_transports sse or an sse_endpoint; headers and credential on the stream and the messages',
  async (t) => {
    const { app, admin } = await setup(t);
    const srv = await backend(t, { tools: [ECHO], auth: { header: 'x-api-key', value: 'sse-key', status: 401 } });
    await register(t, app, admin, {
      name: 'Sse',
      path: '/sse-only',
      proxy_pass_url: srv.base,
      supported_transports: ['sse'],
      auth_scheme: 'api_key',
      auth_credential: 'sse-key',
      headers: { 'X-Team': 'green' },
    });
    const a = await refresh(app, admin, '/sse-only');
    t.equal(a.health_status, 'healthy');
    t.same(
      a.tools.map((x) => x.name),
      ['echo'],
    );
    const stream = srv.seen.filter((x) => x.method === 'GET' && x.path === '/sse');
    t.ok(stream.length > 0, 'the SSE stream was opened at <proxy_pass_url>/sse');
    t.ok(
      stream.every((x) => x.headers['x-api-key'] === 'sse-key' && x.headers['x-team'] === 'green'),
      'credential and custom header on the stream request',
    );
    t.ok(
      stream.every((x) => String(x.headers.accept).includes('text/event-stream')),
      'the stream request still asks for an event stream',
    );
    const messages = srv.seen.filter((x) => x.method === 'POST' && x.path === '/messages');
    t.ok(
      messages.some((x) => x.rpc === 'tools/list') && messages.every((x) => x.headers['x-api-key'] === 'sse-key'),
      'credential on every message',
    );

    srv.seen.length = 0;
    await register(t, app, admin, {
      name: 'SseEndpoint',
      path: '/sse-endpoint',
      proxy_pass_url: srv.base,
      sse_endpoint: `${srv.base}/legacy/sse`,
      auth_scheme: 'api_key',
      auth_credential: 'sse-key',
    });
    t.equal((await refresh(app, admin, '/sse-endpoint')).health_status, 'healthy');
    t.ok(
      srv.seen.some((x) => x.method === 'GET' && x.path === '/legacy/sse'),
      'sse_endpoint honoured (streamable-http by default, SSE because of the endpoint)',
    );
    t.notOk(
      srv.seen.some((x) => x.path.endsWith('/mcp')),
      'no streamable HTTP request',
    );

    srv.behaviour.auth!.value = 'rotated';
    t.equal((await refresh(app, admin, '/sse-endpoint')).health_status, 'auth-expired', 'SSE stream refused with 401');
  },
);

t.test('a server registered with tool_list_json keeps its manual tools until discovery finds real ones', async (t) => {
  const { app, admin } = await setup(t);
  const manual = [
    { name: 'manual_tool', description: 'Declared by hand', inputSchema: { type: 'object', properties: {} } },
  ];
  const srv = await backend(t, { tools: [] });
  const first = await register(t, app, admin, {
    name: 'Manual',
    path: '/manual',
    proxy_pass_url: srv.base,
    tool_list_json: JSON.stringify(manual),
  });
  t.equal(first.health_status, 'healthy', 'the first check found the backend up');
  const tools = async () =>
    (await app.inject({ method: 'GET', url: '/api/tools/manual', headers: admin }))
      .json()
      .tools.map((x: ToolSpec) => x.name);
  t.same(await tools(), ['manual_tool'], 'a healthy backend listing no tools leaves the manual ones');

  srv.behaviour.failStatus = 500;
  t.equal((await refresh(app, admin, '/manual')).health_status, 'unhealthy: status 500');
  t.same(await tools(), ['manual_tool'], 'a failing check does not wipe them');
  srv.behaviour.failStatus = undefined;

  srv.behaviour.tools = [ADD];
  const found = await refresh(app, admin, '/manual');
  t.equal(found.health_status, 'healthy');
  t.same(
    found.tools.map((x) => x.name),
    ['add'],
    'discovered tools replace the manual ones',
  );
  t.equal(found.num_tools, 1);
  t.same(await tools(), ['add']);
});

t.test('a credential that no longer decrypts fails its own server, not the sweep', async (t) => {
  const store = await openStore({ backend: 'memory' });
  const key = () => randomBytes(32).toString('base64');
  const srv = await backend(t, { tools: [ADD] });
  const before = await makeApp(
    t,
    { registry: { health: { interval_seconds: 0, timeout_seconds: 5 } } },
    { store, env: { ENCRYPTION_KEY: key() } },
  );
  const alice = await asUser(before, ['mcp-registry-admin'], 'alice');
  await register(t, before, alice, {
    name: 'Keyed',
    path: '/keyed',
    proxy_pass_url: srv.base,
    auth_scheme: 'bearer',
    auth_credential: 'secret',
  });
  await register(t, before, alice, { name: 'Open', path: '/open', proxy_pass_url: srv.base });
  await before.close();

  // The same store under another ENCRYPTION_KEY: the stored credential cannot be read any more.
  const after = await makeApp(
    t,
    { registry: { health: { interval_seconds: 0, timeout_seconds: 5 } } },
    { store, env: { ENCRYPTION_KEY: key() } },
  );
  const sweep = await after.inject({ method: 'POST', url: '/api/internal/healthcheck', headers: adminBasic(after) });
  t.equal(sweep.statusCode, 200, sweep.body);
  t.equal(sweep.json()['/keyed'].status, 'unhealthy: credential unreadable');
  t.equal(sweep.json()['/open'].status, 'healthy', 'the other server was still checked');
  t.notOk(sweep.body.includes('secret'));
});
