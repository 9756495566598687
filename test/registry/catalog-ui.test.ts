import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { adminBasic, asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { registryAuthOf } from '../../plugins/registry/auth/index.ts';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const weather = {
  name: 'Weather',
  description: 'Forecasts',
  path: '/weather',
  proxy_pass_url: 'http://127.0.0.1:9/mcp',
};
const tools = JSON.stringify([
  { name: 'forecast', description: 'Forecast', inputSchema: { type: 'object' } },
  { name: 'alerts', description: 'Alerts' },
]);

async function setup(t: Parameters<typeof makeApp>[0]) {
  const app = await makeApp(t);
  await withScope(app, {
    _id: 'weather-ops',
    server_access: [{ server: 'weather', methods: ['all'] }],
    ui_permissions: { toggle_service: ['/weather'], modify_service: ['/weather'] },
  });
  return {
    app,
    admin: await asUser(app, ['mcp-registry-admin'], 'alice'),
    reader: await asUser(app, ['mcp-registry-user'], 'bob'),
    ops: await asUser(app, ['weather-ops'], 'olga'),
    basic: adminBasic(app),
  };
}

t.test('UI family: register 201/400, toggle, edit (HTML + 303), details, tools, dashboard', async (t) => {
  const { app, admin, reader, ops } = await setup(t);
  const post = (url: string, headers: Record<string, string>, fields: Record<string, string>) =>
    app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload: form(fields) });

  const reg = await post('/api/register', admin, {
    ...weather,
    tool_list_json: tools,
    num_stars: '4.5',
    license: 'MIT',
  });
  t.equal(reg.statusCode, 201, reg.body);
  t.match(reg.json(), { path: '/weather', server_name: 'Weather', is_enabled: true });
  const exists = await post('/api/register', admin, weather);
  t.equal(exists.statusCode, 400, 'UI register answers 400 when the service exists');
  t.equal(exists.json().code, 'SB_ERR_REGISTRY_SERVER_EXISTS');
  t.equal((await post('/api/register', reader, { ...weather, path: '/r' })).statusCode, 403);
  t.equal((await post('/api/register', {}, { ...weather, path: '/r' })).statusCode, 401);

  t.same((await post('/api/toggle/weather', ops, { enabled: 'false' })).json(), {
    path: '/weather',
    service_path: '/weather',
    is_enabled: false,
    new_enabled_state: false,
    message: 'Service /weather disabled',
  });
  t.equal((await post('/api/toggle/weather', reader, { enabled: 'true' })).statusCode, 403);
  t.equal((await post('/api/toggle/weather', ops, {})).statusCode, 400, 'enabled is required');
  t.equal((await post('/api/toggle/none', admin, { enabled: 'true' })).statusCode, 404);

  const disabledTools = await app.inject({ url: '/api/tools/weather', headers: reader });
  t.equal(disabledTools.statusCode, 400, 'tools of a disabled service');
  t.equal(disabledTools.json().code, 'SB_ERR_REGISTRY_SERVICE_DISABLED');
  t.same(
    (await app.inject({ url: '/api/tools/all', headers: reader })).json().tools,
    [],
    'disabled servers are left out of all',
  );
  await post('/api/toggle/weather', ops, { enabled: 'true' });
  const toolList = await app.inject({ url: '/api/tools/weather', headers: reader });
  t.same(
    toolList.json().tools.map((x: { name: string }) => x.name),
    ['forecast', 'alerts'],
  );
  t.equal((await app.inject({ url: '/api/tools/all', headers: reader })).json().tools.length, 2);

  const edit = await app.inject({ url: '/api/edit/weather', headers: ops });
  t.equal(edit.statusCode, 200);
  t.match(edit.headers['content-type'], /text\/html/);
  t.match(edit.body, /value="Forecasts"/);
  t.equal((await app.inject({ url: '/api/edit/weather', headers: reader })).statusCode, 403);
  const saved = await post('/api/edit/weather', ops, {
    name: 'Weather 2',
    description: '<b>x</b>',
    proxy_pass_url: 'http://127.0.0.1:10/mcp',
  });
  t.equal(saved.statusCode, 303);
  t.equal(saved.headers.location, '/api/');
  t.equal((await post('/api/edit/weather', reader, { name: 'no' })).statusCode, 403);
  t.match(
    (await app.inject({ url: '/api/edit/weather', headers: ops })).body,
    /&lt;b&gt;x&lt;\/b&gt;/,
    'values are escaped',
  );

  const details = await app.inject({ url: '/api/server_details/weather', headers: reader });
  t.match(details.json(), { path: '/weather', server_name: 'Weather 2', license: 'MIT', num_tools: 2 });
  await post('/api/register', admin, { ...weather, path: '/other', name: 'Other' });
  const all = await app.inject({ url: '/api/server_details/all', headers: ops });
  t.same(Object.keys(all.json()), ['/weather'], 'all = the servers the caller may see');
  t.same(Object.keys((await app.inject({ url: '/api/server_details/all', headers: admin })).json()), [
    '/other',
    '/weather',
  ]);
  t.equal((await app.inject({ url: '/api/server_details/other', headers: ops })).statusCode, 403);

  const dash = await app.inject({ url: '/api/?query=other', headers: admin });
  t.equal(dash.statusCode, 200);
  t.match(dash.body, /\/other/);
  t.notMatch(dash.body, /\/weather/);
  t.notMatch((await app.inject({ url: '/api/', headers: ops })).body, /\/other/, 'dashboard filtered by permissions');
});

t.test('older unprefixed family', async (t) => {
  const { app, admin, reader, ops } = await setup(t);
  const post = (url: string, headers: Record<string, string>, fields: Record<string, string>) =>
    app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload: form(fields) });
  const reg = await post('/register', admin, { ...weather, metadata: JSON.stringify({ team: 'sky' }) });
  t.equal(reg.statusCode, 201);
  t.match(reg.json(), { path: '/weather' });
  t.same(catalogOf(app).servers.get('/weather')!.metadata, { team: 'sky' });
  t.equal((await post('/register', admin, weather)).statusCode, 400);
  t.equal((await post('/register', reader, { ...weather, path: '/x' })).statusCode, 403);

  t.equal((await post('/toggle/weather', ops, {})).json().is_enabled, false, 'enabled omitted disables');
  t.equal((await post('/toggle/weather', ops, { enabled: 'on' })).json().is_enabled, true, 'enabled=on enables');
  t.equal((await post('/toggle/weather', reader, { enabled: 'on' })).statusCode, 403);

  t.match(
    (await app.inject({ url: '/edit/weather', headers: ops })).body,
    /<form method="post" action="\/edit\/weather">/,
  );
  const missing = await post('/edit/weather', ops, { description: 'only this' });
  t.equal(missing.statusCode, 422, 'name and proxy_pass_url are required on the older edit');
  const ok = await post('/edit/weather', ops, { name: 'W', proxy_pass_url: 'http://127.0.0.1:11/' });
  t.equal(ok.statusCode, 303);
  t.equal(catalogOf(app).servers.get('/weather')!.proxy_pass_url, 'http://127.0.0.1:11/');
});

t.test('internal admin endpoints: Basic only, overwrite, 201/409, groups', async (t) => {
  const { app, admin, basic } = await setup(t);
  const post = (url: string, headers: Record<string, string>, fields: Record<string, string>) =>
    app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload: form(fields) });

  const noBasic = await post('/api/internal/register', admin, weather);
  t.equal(noBasic.statusCode, 401, 'a bearer admin is not Basic');
  t.match(noBasic.headers['www-authenticate'], /^Basic/);
  t.equal((await post('/api/internal/register', {}, weather)).statusCode, 401);
  const bad = { authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` };
  t.equal((await post('/api/internal/register', bad, weather)).statusCode, 401);

  t.equal(
    (
      await post('/api/internal/register', basic, {
        ...weather,
        supported_transports: '["sse"]',
        headers: '{"X-Team":"sky"}',
      })
    ).statusCode,
    201,
  );
  t.same(catalogOf(app).servers.get('/weather')!.supported_transports, ['sse']);
  t.equal((await post('/api/internal/register', basic, weather)).statusCode, 409);
  await post('/api/internal/toggle', basic, { service_path: '/weather' });
  t.equal(catalogOf(app).servers.get('/weather')!.is_enabled, false);
  const over = await post('/api/internal/register', basic, { ...weather, description: 'Replaced', overwrite: 'true' });
  t.equal(over.statusCode, 201);
  t.equal(over.json().is_enabled, true, 'internal register auto-enables');
  t.equal(catalogOf(app).servers.get('/weather')!.description, 'Replaced');

  const list = await app.inject({ url: '/api/internal/list', headers: basic });
  t.match(list.json(), {
    total: 1,
    services: [{ path: '/weather', health_status: String, proxy_pass_url: 'http://127.0.0.1:9/mcp' }],
  });
  t.equal((await app.inject({ url: '/api/internal/list', headers: admin })).statusCode, 401);

  t.same(
    (await post('/api/internal/add-to-groups', basic, { server_name: 'weather', group_names: 'a,b' })).json().groups,
    ['a', 'b'],
  );
  t.same(
    (await post('/api/internal/remove-from-groups', basic, { server_name: 'weather', group_names: 'a' })).json().groups,
    ['b'],
  );
  t.equal(
    (await post('/api/internal/add-to-groups', basic, { server_name: 'nope', group_names: 'a' })).statusCode,
    404,
  );
  t.equal((await post('/api/internal/toggle', basic, { service_path: '/nope' })).statusCode, 404);

  t.equal((await post('/api/internal/remove', admin, { service_path: '/weather' })).statusCode, 401);
  t.equal((await post('/api/internal/remove', basic, { service_path: '/weather' })).statusCode, 200);
  t.equal((await post('/api/internal/remove', basic, { service_path: '/weather' })).statusCode, 404);
});

t.test('UI family with the session cookie: CSRF token required on form posts, offered by the edit form', async (t) => {
  const { app, admin } = await setup(t);
  const { username, password } = registryAuthOf(app).authenticator.admin;
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: FORM,
    payload: form({ username, password }),
  });
  t.equal(login.statusCode, 302);
  const session = login.cookies.find((c) => c.name === 'mcp_gateway_session');
  t.ok(session, 'session cookie set');
  const cookie = { cookie: `mcp_gateway_session=${session!.value}` };

  const noToken = await app.inject({
    method: 'POST',
    url: '/api/register',
    headers: { ...FORM, ...cookie },
    payload: form(weather),
  });
  t.equal(noToken.statusCode, 403);
  t.equal(noToken.json().code, 'SB_ERR_AUTH_CSRF');
  t.equal(catalogOf(app).servers.get('/weather'), undefined);
  const csrf = (await app.inject({ url: '/api/auth/csrf', headers: cookie })).json().csrf_token;
  const ok = await app.inject({
    method: 'POST',
    url: '/api/register',
    headers: { ...FORM, ...cookie },
    payload: form({ ...weather, csrf_token: csrf }),
  });
  t.equal(ok.statusCode, 201, ok.body);

  const page = await app.inject({ url: '/api/edit/weather', headers: cookie });
  const fromForm = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1];
  t.equal(fromForm, csrf, 'the edit form carries the token');
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/edit/weather',
        headers: { ...FORM, ...cookie },
        payload: form({ description: 'x' }),
      })
    ).statusCode,
    403,
  );
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/edit/weather',
        headers: { ...FORM, ...cookie },
        payload: form({ description: 'x', csrf_token: fromForm! }),
      })
    ).statusCode,
    303,
  );
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/toggle/weather',
        headers: { ...FORM, ...cookie, 'x-csrf-token': csrf },
        payload: form({}),
      })
    ).json().is_enabled,
    false,
  );
  t.notMatch(
    (await app.inject({ url: '/api/edit/weather', headers: admin })).body,
    /csrf_token/,
    'bearer callers need no token',
  );
});

t.test(
  'internal register updates the scope definitions; groups endpoints grant and revoke through the group scopes',
  async (t) => {
    const { app, admin, basic } = await setup(t);
    const post = (url: string, headers: Record<string, string>, fields: Record<string, string>) =>
      app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload: form(fields) });
    const rpc = (method: string, name?: string) =>
      JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: name ? { name } : {} });
    const validate = (headers: Record<string, string>, server: string) =>
      app.inject({
        url: '/validate',
        headers: { ...headers, 'x-original-url': `/${server}/mcp`, 'x-body': rpc('tools/call', 'forecast') },
      });
    // A member of the group the unrestricted scope maps (an IdP group, mapped at each request).

    const wide = {
      authorization: `Bearer ${await mintToken(app, { username: 'uma', groups: ['mcp-servers-unrestricted'] })}`,
    };
    const wideUser = await app.inject({ url: '/api/auth/me', headers: wide });
    t.same(wideUser.json().scopes, ['mcp-servers-unrestricted']);

    t.equal((await validate(wide, 'weather')).statusCode, 403, 'before registration');
    const reg = await post('/api/internal/register', basic, weather);
    t.equal(reg.statusCode, 201, reg.body);
    t.same(reg.json().scopes_updated, ['mcp-servers-unrestricted']);
    t.match(registryAuthOf(app).scopes.get('mcp-servers-unrestricted')!.server_access, [
      { server: 'weather', methods: ['all'], tools: ['all'] },
    ]);
    t.equal(
      (await validate(wide, 'weather')).statusCode,
      200,
      'the same (cached) token now reaches the server and its tools',
    );
    t.same(
      (await app.inject({ url: '/api/servers', headers: wide })).json().servers.map((s: { path: string }) => s.path),
      ['/weather'],
    );
    t.equal((await validate(admin, 'weather')).statusCode, 200, 'admins reach it through their wildcard');

    // Programmatic registration does not touch the scope definitions (only the internal endpoint does, spec 4.5).
    t.equal((await post('/api/servers/register', admin, { ...weather, path: '/other' })).statusCode, 201);
    t.equal((await validate(wide, 'other')).statusCode, 403);

    // Removing the server takes it out of the scopes again: a server registered later at that path starts with no grants.
    t.equal((await post('/api/internal/remove', basic, { service_path: '/weather' })).statusCode, 200);
    t.same(registryAuthOf(app).scopes.get('mcp-servers-unrestricted')!.server_access, []);
    t.equal((await post('/api/servers/register', admin, weather)).statusCode, 201);
    t.equal((await validate(wide, 'weather')).statusCode, 403);

    // Groups with a scope document grant their members the server; other group names stay labels.
    t.equal((await post('/api/internal/create-group', basic, { group_name: 'data-team' })).statusCode, 201);
    const member = { authorization: `Bearer ${await mintToken(app, { username: 'dan', groups: ['data-team'] })}` };
    for (const [add, remove, headers] of [
      ['/api/internal/add-to-groups', '/api/internal/remove-from-groups', basic],
      ['/api/servers/groups/add', '/api/servers/groups/remove', admin],
    ] as const) {
      t.equal((await validate(member, 'weather')).statusCode, 403, `${add}: not yet`);
      const added = await post(add, headers, { server_name: 'weather', group_names: 'data-team, just-a-label' });
      t.equal(added.statusCode, 200, added.body);
      t.same(added.json().scopes_updated, ['data-team']);
      t.same(added.json().groups, ['data-team', 'just-a-label']);
      t.equal((await validate(member, 'weather')).statusCode, 200, `${add}: members reach the server`);
      const removed = await post(remove, headers, { server_name: 'weather', group_names: 'data-team' });
      t.same(removed.json().scopes_updated, ['data-team']);
      t.equal((await validate(member, 'weather')).statusCode, 403, `${remove}: revoked`);
      await post(remove, headers, { server_name: 'weather', group_names: 'just-a-label' });
    }

    // Deleting through the programmatic API also drops API-added grants.
    await post('/api/servers/groups/add', admin, { server_name: 'weather', group_names: 'data-team' });
    t.equal((await app.inject({ method: 'DELETE', url: '/api/servers/weather', headers: admin })).statusCode, 200);
    t.notOk(
      registryAuthOf(app)
        .scopes.get('data-team')!
        .server_access.some((r) => 'server' in r && r.server === 'weather'),
    );
  },
);
