import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { adminBasic, asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const weather = {
  name: 'Weather',
  description: 'Forecasts',
  path: '/weather',
  proxy_pass_url: 'http://127.0.0.1:9/mcp',
};

async function setup(t: Parameters<typeof makeApp>[0], config: Record<string, unknown> = {}) {
  const app = await makeApp(t, config);
  // A limited operator: may toggle and modify /weather only, sees /weather only.
  await withScope(app, {
    _id: 'weather-ops',
    server_access: [{ server: 'weather', methods: ['all'], tools: ['all'] }],
    ui_permissions: { list_service: ['/weather'], toggle_service: ['/weather'], modify_service: ['/weather'] },
  });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const reader = await asUser(app, ['mcp-registry-user'], 'bob');
  const ops = await asUser(app, ['weather-ops'], 'olga');
  const nobody = await asUser(app, ['no-such-scope'], 'nina');
  const register = (headers: Record<string, string>, fields: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: '/api/servers/register',
      payload: form(fields),
      headers: { ...FORM, ...headers },
    });
  return { app, admin, reader, ops, nobody, register };
}

t.test('register: 201 summary, 409 on duplicates, 403/401 denials, 400/422 bad input', async (t) => {
  const { app, admin, reader, ops, register } = await setup(t);
  const reg = await register(admin, { ...weather, tags: 'a, b,a', num_tools: '2', is_python: 'true' });
  t.equal(reg.statusCode, 201, reg.body);
  const { security_scan, ...summary } = reg.json();
  t.match(security_scan, { status: 'SAFE', analyzers_used: ['yara'] }, 'the scan summary comes with it (spec 3)');
  t.same(summary, {
    message: 'Service /weather registered',
    path: '/weather',
    server_name: 'Weather',
    name: 'Weather',
    version: 'v1.0.0',
    is_enabled: true,
    health_status: 'unknown',
    auth_scheme: 'none',
    auth_header_name: null,
    auth_credential_encrypted: false,
    tags: ['a', 'b'],
  });

  const dup = await register(admin, { ...weather, name: 'Other' });
  t.equal(dup.statusCode, 409);
  t.same(Object.keys(dup.json()).sort(), ['code', 'detail']);
  t.equal(dup.json().code, 'SB_ERR_REGISTRY_SERVER_EXISTS');

  // server_name is accepted in place of name (the spec's example requests use it).
  const json = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: { server_name: 'Time', description: 'Clock', path: '/time/', proxy_pass_url: 'http://127.0.0.1:9' },
  });
  t.equal(json.statusCode, 201, json.body);
  t.equal(json.json().path, '/time', 'trailing slash normalised');

  t.equal((await register(reader, { ...weather, path: '/x' })).statusCode, 403, 'reader lacks register_service');
  t.equal(
    (await register(ops, { ...weather, path: '/x' })).statusCode,
    403,
    'ops may modify /weather but not register',
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/servers/register', payload: form(weather), headers: FORM }))
      .statusCode,
    401,
  );

  const missing = await register(admin, { name: 'X', path: '/x' });
  t.equal(missing.statusCode, 422);
  t.same(
    missing
      .json()
      .detail.map((d: { loc: string[] }) => d.loc.join('.'))
      .sort(),
    ['body.description', 'body.proxy_pass_url'],
  );
  for (const [fields, code] of [
    [{ ...weather, path: 'nope' }, 'SB_ERR_REGISTRY_INVALID_PATH'],
    [{ ...weather, path: '/a/../b' }, 'SB_ERR_REGISTRY_INVALID_PATH'],
    [{ ...weather, path: '/health' }, 'SB_ERR_REGISTRY_INVALID_PATH'],
    [{ ...weather, path: '/y', proxy_pass_url: 'ftp://x' }, 'SB_ERR_REGISTRY_INVALID_URL'],
    [{ ...weather, path: '/y', status: 'retired' }, 'SB_ERR_REGISTRY_INVALID_FIELD'],
    [{ ...weather, path: '/y', metadata: '{oops' }, 'SB_ERR_REGISTRY_INVALID_FIELD'],
    [{ ...weather, path: '/y', num_tools: '-1' }, 'SB_ERR_REGISTRY_INVALID_FIELD'],
  ] as const) {
    const r = await register(admin, fields);
    t.equal(r.statusCode, 400, `${JSON.stringify(fields)} -> 400`);
    t.equal(r.json().code, code);
  }
});

t.test(
  'versions: a new version is listed (latest) but served only with set_as_default; a duplicate is 409',
  async (t) => {
    const { app, admin, ops, reader, register } = await setup(t);
    t.equal((await register(admin, { ...weather, version: 'v1.0.0' })).statusCode, 201);
    t.equal((await register(admin, { ...weather, version: 'v1.0.0' })).statusCode, 409, 'same version again');
    await app.inject({
      method: 'POST',
      url: '/api/servers/groups/add',
      headers: { ...FORM, ...admin },
      payload: form({ server_name: 'weather', group_names: 'keep-me' }),
    });
    const stable = catalogOf(app).servers.get('/weather')!;
    // A beta registered over the stable release (the reference CLI's flow) must not take over the endpoint.
    const beta = await register(admin, {
      ...weather,
      version: 'v0.9.0-beta',
      status: 'beta',
      description: 'beta',
      proxy_pass_url: 'http://127.0.0.1:9/beta',
    });
    t.equal(beta.statusCode, 201, beta.body);
    t.match(
      catalogOf(app).servers.get('/weather'),
      {
        version: 'v1.0.0',
        description: stable.description,
        status: 'active',
        proxy_pass_url: stable.proxy_pass_url,
        groups: ['keep-me'],
      },
      'the default version is still served',
    );
    const listed = async () =>
      (await app.inject({ url: '/api/servers/weather/versions', headers: reader }))
        .json()
        .map((v: { version: string; is_latest: boolean; is_default: boolean }) => [
          v.version,
          v.is_latest,
          v.is_default,
        ]);
    t.same(await listed(), [
      ['v1.0.0', false, true],
      ['v0.9.0-beta', true, false],
    ]);

    const v2 = await register(admin, {
      ...weather,
      version: 'v2.0.0',
      status: 'beta',
      description: 'v2',
      set_as_default: 'true',
    });
    t.equal(v2.statusCode, 201, v2.body);
    t.match(
      catalogOf(app).servers.get('/weather'),
      { version: 'v2.0.0', description: 'v2', status: 'beta', groups: ['keep-me'], tags: [] },
      'set_as_default serves it; it keeps what it does not change',
    );
    t.same(await listed(), [
      ['v1.0.0', false, false],
      ['v0.9.0-beta', false, false],
      ['v2.0.0', true, true],
    ]);

    const add = (headers: Record<string, string>, payload: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: '/api/servers/weather/versions', headers, payload });
    t.equal((await add(ops, { version: 'v3.0.0' })).statusCode, 201);
    t.equal((await add(ops, { version: 'v3.0.0' })).statusCode, 409);
    t.equal((await add(reader, { version: 'v4.0.0' })).statusCode, 403);
    t.equal(
      (await app.inject({ url: '/api/servers/weather', headers: reader })).json().version,
      'v2.0.0',
      'an added version is not served without set_as_default',
    );
    const switched = await add(ops, { version: 'v0.9.0-beta', set_as_default: true });
    t.equal(switched.statusCode, 201, switched.body);
    t.match(
      catalogOf(app).servers.get('/weather'),
      { version: 'v0.9.0-beta', proxy_pass_url: 'http://127.0.0.1:9/beta', status: 'beta' },
      'set_as_default on a listed version serves it, endpoint included',
    );
    t.equal((await add(ops, { version: 'v4.0.0', set_as_default: true })).statusCode, 201);
    t.equal((await app.inject({ url: '/api/servers/weather', headers: reader })).json().version, 'v4.0.0');
  },
);

t.test('read: visibility, proxy_pass_url by deployment mode, 404 and 403', async (t) => {
  const { app, admin, reader, ops, nobody, register } = await setup(t);
  await register(admin, weather);
  await register(admin, { ...weather, name: 'Secret', path: '/secret' });
  const get = (url: string, headers: Record<string, string>) => app.inject({ url, headers });

  const asReader = await get('/api/servers/weather', reader);
  t.equal(asReader.statusCode, 200);
  t.notOk('proxy_pass_url' in asReader.json(), 'hidden from non-admins in gateway mode');
  t.equal((await get('/api/servers/weather', admin)).json().proxy_pass_url, 'http://127.0.0.1:9/mcp');
  t.equal((await get('/api/servers/weather', ops)).statusCode, 200);
  t.equal((await get('/api/servers/secret', ops)).statusCode, 403, 'outside the caller scope');
  t.equal((await get('/api/servers/secret', nobody)).statusCode, 403);
  t.equal((await get('/api/servers/nope', admin)).statusCode, 404);
  t.equal((await get('/api/servers/weather', {})).statusCode, 401);

  t.same(
    (await get('/api/servers', ops)).json().servers.map((s: { path: string }) => s.path),
    ['/weather'],
  );
  t.same(
    (await get('/api/servers', reader)).json().servers.map((s: { path: string }) => s.path),
    ['/secret', '/weather'],
  );
  t.same((await get('/api/servers', nobody)).json().servers, []);
  t.same(
    (await get('/api/servers?query=secr', admin)).json().servers.map((s: { path: string }) => s.path),
    ['/secret'],
  );

  const bound = {
    authorization: `Bearer ${await mintToken(app, { username: 'alice', scopes: ['mcp-registry-admin'], resource: { type: 'server', id: 'weather' } })}`,
  };
  t.equal((await get('/api/servers/weather', bound)).statusCode, 200, 'bound token reaches its server');
  t.notOk(
    'proxy_pass_url' in (await get('/api/servers/weather', bound)).json(),
    'a bound admin token is not an admin for backend URLs',
  );
  t.equal((await get('/api/servers/secret', bound)).statusCode, 403, 'bound token refused elsewhere');
  t.equal((await get('/api/servers', bound)).statusCode, 403, 'bound token cannot list');

  const regOnly = await setup(t, { registry: { deployment_mode: 'registry-only' } });
  await regOnly.register(regOnly.admin, weather);
  t.equal(
    (await regOnly.app.inject({ url: '/api/servers/weather', headers: regOnly.reader })).json().proxy_pass_url,
    'http://127.0.0.1:9/mcp',
    'registry-only shows backends to all',
  );
});

t.test('update, toggle, delete, groups with grants and denials', async (t) => {
  const { app, admin, reader, ops, register } = await setup(t);
  await register(admin, weather);
  await register(admin, { ...weather, name: 'Secret', path: '/secret' });

  const put = (url: string, headers: Record<string, string>, fields: Record<string, string>) =>
    app.inject({ method: 'PUT', url, headers: { ...FORM, ...headers }, payload: form(fields) });
  const upd = await put('/api/servers/weather', ops, {
    description: 'Better forecasts',
    tags: 'x',
    status: 'deprecated',
  });
  t.equal(upd.statusCode, 200, upd.body);
  t.match(upd.json(), { description: 'Better forecasts', tags: ['x'], status: 'deprecated', server_name: 'Weather' });
  t.equal((await put('/api/servers/secret', ops, { description: 'mine now' })).statusCode, 403);
  t.equal((await put('/api/servers/weather', reader, { description: 'no' })).statusCode, 403);
  t.equal((await put('/api/servers/weather', ops, { path: '/elsewhere' })).statusCode, 400, 'path cannot change');
  t.equal((await put('/api/servers/missing', admin, { description: 'x' })).statusCode, 404);

  const toggle = (headers: Record<string, string>, path: string, new_state: string) =>
    app.inject({
      method: 'POST',
      url: '/api/servers/toggle',
      headers: { ...FORM, ...headers },
      payload: form({ path, new_state }),
    });
  const off = await toggle(ops, '/weather', 'false');
  t.same(off.json(), { path: '/weather', is_enabled: false, message: 'Service /weather disabled' });
  t.equal((await toggle(ops, '/secret', 'false')).statusCode, 403);
  t.equal((await toggle(reader, '/weather', 'true')).statusCode, 403);
  t.equal((await toggle(admin, '/weather', 'maybe')).statusCode, 400);
  t.equal((await toggle(admin, '/nope', 'true')).statusCode, 404);
  t.equal((await toggle(admin, '/weather', 'true')).json().is_enabled, true);

  const groups = (headers: Record<string, string>, op: string, server_name: string, group_names: string) =>
    app.inject({
      method: 'POST',
      url: `/api/servers/groups/${op}`,
      headers: { ...FORM, ...headers },
      payload: form({ server_name, group_names }),
    });
  t.same((await groups(admin, 'add', 'secret', 'finance, legal')).json().groups, ['finance', 'legal']);
  t.equal((await groups(reader, 'add', 'secret', 'x')).statusCode, 403);
  t.equal((await groups(admin, 'add', 'nothing', 'x')).statusCode, 404);
  // Group membership grants visibility to members of the group.
  const member = {
    authorization: `Bearer ${await mintToken(app, { username: 'fay', groups: ['finance'], scopes: ['finance'] })}`,
  };
  t.equal((await app.inject({ url: '/api/servers/secret', headers: member })).statusCode, 200);
  t.same((await groups(admin, 'remove', 'Secret', 'finance')).json().groups, ['legal'], 'found by display name too');
  t.equal((await app.inject({ url: '/api/servers/secret', headers: member })).statusCode, 403);

  t.equal((await app.inject({ method: 'DELETE', url: '/api/servers/secret', headers: ops })).statusCode, 403);
  t.equal((await app.inject({ method: 'DELETE', url: '/api/servers/weather', headers: reader })).statusCode, 403);
  t.equal((await app.inject({ method: 'DELETE', url: '/api/servers/weather', headers: ops })).statusCode, 200);
  t.equal((await app.inject({ url: '/api/servers/weather', headers: admin })).statusCode, 404);
  t.equal((await app.inject({ method: 'DELETE', url: '/api/servers/weather', headers: admin })).statusCode, 404);
});

t.test('ratings 1-5, one per user', async (t) => {
  const { app, admin, reader, ops, register } = await setup(t);
  await register(admin, weather);
  await register(admin, { ...weather, name: 'Secret', path: '/secret' });
  const rate = (headers: Record<string, string>, url: string, payload: unknown) =>
    app.inject({ method: 'POST', url, headers, payload: payload as object });
  t.equal((await rate(reader, '/api/servers/weather/rating', { rating: 4 })).statusCode, 201);
  const r = await rate(admin, '/api/servers/weather/rating', { rating: 2, comment: 'meh' });
  t.equal(r.statusCode, 201);
  t.match(r.json(), { num_stars: 3, num_ratings: 2 });
  t.match(
    (await rate(reader, '/api/servers/weather/rating', { rating: 5 })).json(),
    { num_stars: 3.5, num_ratings: 2 },
    'a second rating replaces the first',
  );
  t.equal((await rate(reader, '/api/servers/weather/rating', { rating: 6 })).statusCode, 400);
  t.equal((await rate(reader, '/api/servers/weather/rating', { rating: 0 })).statusCode, 400);
  t.equal((await rate(reader, '/api/servers/weather/rating', { rating: 'five' })).statusCode, 422);
  t.equal((await rate(ops, '/api/servers/secret/rating', { rating: 5 })).statusCode, 403);
  const got = await app.inject({ url: '/api/servers/weather/rating', headers: ops });
  t.equal(got.statusCode, 200);
  t.equal(got.json().rating_details.length, 2);
  t.equal((await app.inject({ url: '/api/servers/weather', headers: reader })).json().num_stars, 3.5);
});

t.test('concurrent writes to one server are serialised, none is lost', async (t) => {
  const { app, admin, register } = await setup(t);
  await register(admin, weather);
  const servers = catalogOf(app).servers;
  // The health checker probes a new server at once (127.0.0.1:9 refuses): let its write land first,
  // so that the writes below are the only ones racing and the expected end state is theirs.
  for (let i = 0; i < 400 && servers.get('/weather')!.last_checked_iso === null; i++)
    await new Promise((r) => setTimeout(r, 25));
  t.not(servers.get('/weather')!.last_checked_iso, null, 'the registration check has landed');
  await Promise.all([
    servers.setEnabled('/weather', false),
    servers.updateHealth('/weather', {
      health_status: 'healthy',
      last_checked_iso: new Date().toISOString(),
      tools: [{ name: 'a' }],
    }),
    servers.setGroups('/weather', ['g1'], []),
    servers.setGroups('/weather', ['g2'], []),
    app.inject({ method: 'POST', url: '/api/servers/weather/rating', headers: admin, payload: { rating: 5 } }),
    app.inject({
      method: 'POST',
      url: '/api/servers/weather/rating',
      headers: await asUser(app, ['mcp-registry-user'], 'bob'),
      payload: { rating: 3 },
    }),
  ]);
  const s = servers.get('/weather')!;
  t.equal(s.is_enabled, false);
  t.equal(s.health_status, 'healthy');
  t.same(
    s.tools.map((x) => x.name),
    ['a'],
  );
  t.same(s.groups.sort(), ['g1', 'g2']);
  t.equal(catalogOf(app).ratings.view('server:/weather').num_ratings, 2);
});

t.test(
  'link-local and metadata backends are refused at every register, update and edit endpoint unless the config allows them',
  async (t) => {
    const { app, admin, register } = await setup(t);
    await register(admin, weather);
    const basic = adminBasic(app);
    const blocked = [
      'http://169.254.169.254/latest/meta-data',
      'http://169.254.10.1:8080/mcp',
      'http://[fd00:ec2::254]/mcp',
      'http://[fe80::1]:8080/mcp',
      'http://metadata.google.internal/computeMetadata/v1',
    ];
    const endpoints: Array<[string, string, Record<string, string>, (url: string) => Record<string, string>]> = [
      ['POST', '/api/servers/register', admin, (u) => ({ ...weather, path: '/new', proxy_pass_url: u })],
      ['POST', '/api/servers/register', admin, (u) => ({ ...weather, path: '/new', mcp_endpoint: u })],
      ['POST', '/api/register', admin, (u) => ({ ...weather, path: '/new', proxy_pass_url: u })],
      ['POST', '/register', admin, (u) => ({ ...weather, path: '/new', proxy_pass_url: u })],
      ['POST', '/api/internal/register', basic, (u) => ({ ...weather, path: '/new', proxy_pass_url: u })],
      ['POST', '/api/internal/register', basic, (u) => ({ ...weather, overwrite: 'true', sse_endpoint: u })],
      ['PUT', '/api/servers/weather', admin, (u) => ({ proxy_pass_url: u })],
      ['POST', '/api/edit/weather', admin, (u) => ({ name: 'Weather', proxy_pass_url: u })],
      ['POST', '/edit/weather', admin, (u) => ({ name: 'Weather', proxy_pass_url: u })],
      ['POST', '/api/servers/weather/versions', admin, (u) => ({ version: 'v9', proxy_pass_url: u })],
    ];
    for (const url of blocked) {
      for (const [method, path, headers, body] of endpoints) {
        const r = await app.inject({
          method: method as 'POST',
          url: path,
          headers: { ...FORM, ...headers },
          payload: form(body(url)),
        });
        t.equal(r.statusCode, 400, `${method} ${path} with ${url}: ${r.body}`);
        t.equal(r.json().code, 'SB_ERR_REGISTRY_BLOCKED_ADDRESS');
        t.match(r.json().detail, /allow_link_local_backends/, 'the detail says how to fix it');
      }
    }
    const s = catalogOf(app).servers;
    t.notOk(s.get('/new'), 'nothing was registered');
    t.equal(s.get('/weather')!.proxy_pass_url, 'http://127.0.0.1:9/mcp', 'nothing was changed');
    t.same(
      s.get('/weather')!.versions.map((v) => v.version),
      ['v1.0.0'],
    );
    // Loopback and private backends are ordinary (local development, a cluster network).
    t.equal(
      (await register(admin, { ...weather, path: '/private', proxy_pass_url: 'http://10.1.2.3:8000/mcp' })).statusCode,
      201,
    );

    const allowed = await setup(t, { registry: { allow_link_local_backends: true } });
    const ok = await allowed.register(allowed.admin, {
      ...weather,
      path: '/meta',
      proxy_pass_url: 'http://169.254.10.1:8080/mcp',
    });
    t.equal(ok.statusCode, 201, ok.body);
  },
);

t.test(
  'supported_transports in a form: one value, comma-separated, JSON list, repeated keys; JSON bodies a list',
  async (t) => {
    const { app, admin, register } = await setup(t);
    const transportsOf = (path: string) => catalogOf(app).servers.get(path)!.supported_transports;
    const cases: Array<[string, string, string[]]> = [
      ['/one', 'streamable-http', ['streamable-http']],
      ['/comma', 'streamable-http, sse', ['streamable-http', 'sse']],
      ['/json', '["sse"]', ['sse']],
    ];
    for (const [path, value, want] of cases) {
      const r = await register(admin, { ...weather, path, supported_transports: value });
      t.equal(r.statusCode, 201, `${value}: ${r.body}`);
      t.same(transportsOf(path), want, value);
    }
    const repeated = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: { ...FORM, ...admin },
      payload: `${form({ ...weather, path: '/repeated' })}&supported_transports=sse&supported_transports=streamable-http`,
    });
    t.equal(repeated.statusCode, 201, repeated.body);
    t.same(transportsOf('/repeated'), ['sse', 'streamable-http']);
    const json = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: admin,
      payload: { ...weather, path: '/jsonbody', supported_transports: ['sse'] },
    });
    t.equal(json.statusCode, 201, json.body);
    t.same(transportsOf('/jsonbody'), ['sse']);

    for (const bad of ['["sse", 3]', 'stream able', ',', '[not json']) {
      const r = await register(admin, { ...weather, path: '/bad', supported_transports: bad });
      t.equal(r.statusCode, 400, `refused: ${bad}`);
      t.match(r.json(), { code: 'SB_ERR_REGISTRY_INVALID_FIELD', detail: /supported_transports/ });
    }
    t.notOk(catalogOf(app).servers.get('/bad'), 'nothing stored for bad input');
  },
);
