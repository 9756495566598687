import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { adminBasic, asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { startControlledServer, type ToolSpec } from '../mcp/controlled-server.ts';

const tool = (name: string): ToolSpec => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: 'object', properties: {} },
});

/**
 * The health endpoints with their grants and denials: two servers, an admin,
 * a caller whose scope covers server /a only, a read-only user, and no caller.
 */
t.test('health endpoints: grants and denials', async (t) => {
  const a = await startControlledServer({ tools: [tool('alpha')] });
  const b = await startControlledServer({ tools: [tool('beta')] });
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 5 } } });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  for (const [path, srv] of [
    ['/a', a],
    ['/b', b],
  ] as const) {
    const r = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: admin,
      payload: { name: path, description: 'endpoint test', path, proxy_pass_url: srv.base },
    });
    t.equal(r.statusCode, 201, r.body);
  }
  await withScope(app, {
    _id: 'a-operators',
    server_access: [{ server: 'a', methods: ['all'], tools: ['all'] }],
    ui_permissions: { list_service: ['/a'], health_check_service: ['/a'] },
  });
  const operator = { authorization: `Bearer ${await mintToken(app, { username: 'olga', scopes: ['a-operators'] })}` };
  const reader = await asUser(app, ['mcp-registry-user'], 'rita');

  t.test('refresh: POST /api/servers/{path}/refresh, /api/refresh/{path}, /refresh/{path}', async (t) => {
    for (const url of ['/api/servers/{p}/refresh', '/api/refresh/{p}', '/refresh/{p}']) {
      const at = (p: string) => url.replace('{p}', p);
      const granted = await app.inject({ method: 'POST', url: at('a'), headers: operator });
      t.equal(granted.statusCode, 200, `${url}: health_check_service on /a grants /a`);
      t.equal(granted.json().health_status, 'healthy');
      t.same(
        granted.json().tools.map((x: ToolSpec) => x.name),
        ['alpha'],
      );
      t.equal((await app.inject({ method: 'POST', url: at('a') })).statusCode, 401, `${url}: no credentials`);
      const other = await app.inject({ method: 'POST', url: at('b'), headers: operator });
      t.equal(other.statusCode, 403, `${url}: not on /b`);
      t.match(
        other.json(),
        { code: 'SB_ERR_AUTH_FORBIDDEN', detail: /health_check_service/ },
        'the denial names the missing permission',
      );
      t.equal(
        (await app.inject({ method: 'POST', url: at('a'), headers: reader })).statusCode,
        403,
        `${url}: read-only user`,
      );
      t.equal(
        (await app.inject({ method: 'POST', url: at('b'), headers: admin })).statusCode,
        200,
        `${url}: admin on /b`,
      );
      t.equal(
        (await app.inject({ method: 'POST', url: at('missing'), headers: admin })).statusCode,
        404,
        `${url}: unknown server`,
      );
    }
    const bound = {
      authorization: `Bearer ${await mintToken(app, { username: 'alice', scopes: ['mcp-registry-admin'], resource: { type: 'server', id: '/a' } })}`,
    };
    t.equal(
      (await app.inject({ method: 'POST', url: '/api/servers/b/refresh', headers: bound })).statusCode,
      403,
      'an admin token bound to /a cannot refresh /b',
    );
    t.equal(
      (await app.inject({ method: 'POST', url: '/api/servers/a/refresh', headers: bound })).statusCode,
      200,
      'but can refresh /a',
    );
  });

  t.test('POST /api/internal/healthcheck: HTTP Basic admin only', async (t) => {
    const ok = await app.inject({ method: 'POST', url: '/api/internal/healthcheck', headers: adminBasic(app) });
    t.equal(ok.statusCode, 200, ok.body);
    t.same(Object.keys(ok.json()).sort(), ['/a', '/b']);
    t.match(ok.json()['/b'], { status: 'healthy', num_tools: 1, last_checked_iso: String });
    t.equal((await app.inject({ method: 'POST', url: '/api/internal/healthcheck' })).statusCode, 401, 'no credentials');
    t.equal(
      (await app.inject({ method: 'POST', url: '/api/internal/healthcheck', headers: admin })).statusCode,
      401,
      'a bearer admin token is not Basic',
    );
    const wrong = await app.inject({
      method: 'POST',
      url: '/api/internal/healthcheck',
      headers: { authorization: `Basic ${Buffer.from('admin:not-the-password').toString('base64')}` },
    });
    t.equal(wrong.statusCode, 401, 'wrong password');
    t.match(wrong.headers['www-authenticate'], /Basic/);
  });

  t.test('GET /api/servers/health: the servers the caller can see', async (t) => {
    const all = await app.inject({ method: 'GET', url: '/api/servers/health', headers: admin });
    t.same(Object.keys(all.json().servers).sort(), ['/a', '/b']);
    t.match(all.json().servers['/a'], { status: 'healthy', num_tools: 1 });
    const mine = await app.inject({ method: 'GET', url: '/api/servers/health', headers: operator });
    t.same(Object.keys(mine.json().servers), ['/a'], 'the /a operator sees /a only');
    t.equal((await app.inject({ method: 'GET', url: '/api/servers/health' })).statusCode, 401);
  });

  t.test('GET /api/health/ws/health_status: the HTTP snapshot, no auth', async (t) => {
    const snap = await app.inject({ method: 'GET', url: '/api/health/ws/health_status' });
    t.equal(snap.statusCode, 200);
    t.match(snap.json(), {
      '/a': { status: 'healthy', num_tools: 1, last_checked_iso: String },
      '/b': { status: 'healthy' },
    });
  });

  t.test('GET /api/tools/{path} and all; 400 for a disabled service', async (t) => {
    const one = await app.inject({ method: 'GET', url: '/api/tools/a', headers: operator });
    t.equal(one.statusCode, 200, one.body);
    t.same(
      one.json().tools.map((x: ToolSpec) => x.name),
      ['alpha'],
    );
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/tools/b', headers: operator })).statusCode,
      403,
      'a server outside the scope',
    );
    t.equal((await app.inject({ method: 'GET', url: '/api/tools/a' })).statusCode, 401);
    const mine = await app.inject({ method: 'GET', url: '/api/tools/all', headers: operator });
    t.same(
      mine.json().tools.map((x: ToolSpec) => x.name),
      ['alpha'],
      'all = every visible server',
    );
    const every = await app.inject({ method: 'GET', url: '/api/tools/all', headers: admin });
    t.same(
      every
        .json()
        .tools.map((x: ToolSpec) => x.name)
        .sort(),
      ['alpha', 'beta'],
    );

    const off = await app.inject({
      method: 'POST',
      url: '/api/servers/toggle',
      headers: admin,
      payload: { path: '/b', new_state: false },
    });
    t.equal(off.statusCode, 200, off.body);
    const disabled = await app.inject({ method: 'GET', url: '/api/tools/b', headers: admin });
    t.equal(disabled.statusCode, 400);
    t.match(disabled.json(), { code: 'SB_ERR_REGISTRY_SERVICE_DISABLED', detail: /disabled/ });
    const rest = await app.inject({ method: 'GET', url: '/api/tools/all', headers: admin });
    t.same(
      rest.json().tools.map((x: ToolSpec) => x.name),
      ['alpha'],
      'all leaves disabled servers out',
    );
    const health = await app.inject({ method: 'GET', url: '/api/servers/health', headers: admin });
    t.equal(health.json().servers['/b'].status, 'disabled');
  });
});
