import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { makeApp } from '../helpers/app.ts';
import { asUser, withScope, mintToken, adminBasic } from '../helpers/registry-auth.ts';
import { startBearerServer } from '../mcp/bearer-server.ts';
import { startEverything } from '../mcp/servers.ts';

async function listening(t: Test, config: Record<string, unknown> = {}) {
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 5 } }, ...config });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return { app, base };
}

/** Collect WebSocket messages; `next(pred)` waits for the first one that matches. */
function watch(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  const seen: Array<Record<string, { status: string; num_tools: number; last_checked_iso: string | null }>> = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (d) => {
    const text = d.toString();
    if (text === 'pong') return;
    seen.push(JSON.parse(text));
    for (const w of waiters.splice(0)) w();
  });
  const next = async (pred: (m: (typeof seen)[number]) => boolean, label: string) => {
    const deadline = Date.now() + 10000;
    for (;;) {
      const hit = seen.find(pred);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no WebSocket message for: ${label}; saw ${JSON.stringify(seen)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, seen, next, opened };
}

t.test(
  'through the gateway: list and call with a minted token, refused tools, and the dashboard follows health',
  async (t) => {
    const backend = await startBearerServer('first-credential');
    t.teardown(() => backend.stop());
    const { app, base } = await listening(t);
    const admin = await asUser(app, ['mcp-registry-admin'], 'alice');

    // Live feed without auth on the older path; the newer one needs a session.
    const feed = watch(`${base.replace('http', 'ws')}/ws/health_status`);
    t.teardown(() => feed.ws.close());
    await feed.opened;

    const reg = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: admin,
      payload: {
        name: 'Guarded',
        description: 'bearer-protected test server',
        path: '/guarded',
        proxy_pass_url: backend.url.replace(/\/mcp$/, ''),
        auth_scheme: 'bearer',
        auth_credential: 'first-credential',
      },
    });
    t.equal(reg.statusCode, 201, reg.body);

    const refreshed = await app.inject({ method: 'POST', url: '/api/servers/guarded/refresh', headers: admin });
    t.equal(refreshed.statusCode, 200, refreshed.body);
    t.equal(refreshed.json().health_status, 'healthy');
    t.same(
      refreshed
        .json()
        .tools.map((x: { name: string }) => x.name)
        .sort(),
      ['add', 'secret_echo'],
    );
    t.ok(
      backend.seen.some((h) => h.authorization === 'Bearer first-credential'),
      'the stored credential was sent to the backend',
    );
    await feed.next((m) => m['/guarded']?.status === 'healthy', 'healthy');

    // A caller whose scope grants only the `add` tool on this server.
    await withScope(app, {
      _id: 'guarded-adders',
      server_access: [
        {
          server: 'guarded',
          methods: ['initialize', 'notifications/initialized', 'tools/list', 'tools/call'],
          tools: ['add'],
        },
      ],
    });
    const token = await mintToken(app, { username: 'bob', scopes: ['guarded-adders'] });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/guarded/mcp`), {
        requestInit: { headers: { 'x-authorization': `Bearer ${token}` } },
      }),
    );
    t.teardown(() => client.close());
    t.same(
      (await client.listTools()).tools.map((x) => x.name),
      ['add'],
      'tools/list shows only the tools bob may call',
    );
    const sum = await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } });
    t.match(JSON.stringify(sum.content), /"42"/);
    await t.rejects(
      client.callTool({ name: 'secret_echo', arguments: { message: 'x' } }),
      /403|Access denied/,
      'a tool outside the scope is refused',
    );

    // The backend rotates its secret: the stored credential goes stale.
    backend.setToken('second-credential');
    const stale = await app.inject({ method: 'POST', url: '/api/servers/guarded/refresh', headers: admin });
    t.equal(stale.json().health_status, 'auth-expired');
    await feed.next((m) => m['/guarded']?.status === 'auth-expired', 'auth-expired');

    const upd = await app.inject({
      method: 'PATCH',
      url: '/api/servers/guarded/auth-credential',
      headers: admin,
      payload: { auth_scheme: 'bearer', auth_credential: 'second-credential' },
    });
    t.equal(upd.statusCode, 200, upd.body);
    const back = await app.inject({ method: 'POST', url: '/api/servers/guarded/refresh', headers: admin });
    t.equal(back.json().health_status, 'healthy');
    const healthyAgain = feed.seen.filter((m) => m['/guarded']?.status === 'healthy');
    await feed.next(
      () =>
        feed.seen.filter((m) => m['/guarded']?.status === 'healthy').length > healthyAgain.length - 1 &&
        feed.seen.at(-1)?.['/guarded']?.status === 'healthy',
      'healthy again',
    );

    // Registry credentials are required here (issue 13).
    const stats = await app.inject({ method: 'GET', url: '/api/health/ws/stats', headers: admin });
    t.equal(stats.json().active_connections, 1);
    t.ok(stats.json().total_messages_sent >= 4);
    t.notOk(JSON.stringify(stats.json()).includes('credential'));
  },
);

t.test('health endpoints: snapshot, list, internal sweep, disabled servers, tool discovery over SSE', async (t) => {
  const sse = await startEverything('sse');
  t.teardown(() => sse.stop());
  const { app } = await listening(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: {
      name: 'Everything',
      description: 'reference server over SSE',
      path: '/everything',
      proxy_pass_url: sse.url.replace(/\/sse$/, ''),
      supported_transports: ['sse'],
    },
  });
  t.equal(reg.statusCode, 201, reg.body);

  const sweep = await app.inject({ method: 'POST', url: '/api/internal/healthcheck', headers: adminBasic(app) });
  t.equal(sweep.statusCode, 200, sweep.body);
  t.equal(sweep.json()['/everything'].status, 'healthy');
  t.ok(sweep.json()['/everything'].num_tools > 3);
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/internal/healthcheck', headers: admin })).statusCode,
    401,
    'internal endpoints take HTTP Basic only',
  );

  const snap = await app.inject({ method: 'GET', url: '/api/health/ws/health_status' });
  t.equal(snap.json()['/everything'].status, 'healthy');
  const list = await app.inject({ method: 'GET', url: '/api/servers/health', headers: admin });
  t.equal(list.json().servers['/everything'].status, 'healthy');
  t.equal((await app.inject({ method: 'GET', url: '/api/servers/health' })).statusCode, 401);

  const tools = await app.inject({ method: 'GET', url: '/api/tools/everything', headers: admin });
  t.ok(
    tools.json().tools.some((x: { name: string }) => x.name === 'echo'),
    'discovered tools are served',
  );

  const user = await asUser(app, ['mcp-registry-user'], 'carol');
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/servers/everything/refresh', headers: user })).statusCode,
    403,
    'refresh needs health_check_service',
  );
  t.equal((await app.inject({ method: 'POST', url: '/api/servers/nope/refresh', headers: admin })).statusCode, 404);

  const off = await app.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: admin,
    payload: { path: '/everything', new_state: false },
  });
  t.equal(off.statusCode, 200, off.body);
  const disabled = await app.inject({ method: 'POST', url: '/api/refresh/everything', headers: admin });
  t.equal(disabled.json().health_status, 'disabled');
});

t.test('the session-only WebSocket refuses callers without a session', async (t) => {
  const { base } = await listening(t);
  const ws = new WebSocket(`${base.replace('http', 'ws')}/api/health/ws/health_status`);
  const code = await new Promise<number>((resolve) => ws.on('close', (c) => resolve(c)));
  t.equal(code, 4401);
});
