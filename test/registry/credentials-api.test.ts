import { Writable } from 'node:stream';
import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { adminBasic, asUser, withScope } from '../helpers/registry-auth.ts';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const SECRET = 'sk-plaintext-Backend-Credential-42';
const weather = {
  name: 'Weather',
  description: 'Forecasts',
  path: '/weather',
  proxy_pass_url: 'http://127.0.0.1:9/mcp',
};

async function setup(t: Parameters<typeof makeApp>[0]) {
  const app = await makeApp(t);
  await withScope(app, {
    _id: 'weather-editor',
    server_access: [{ server: 'weather', methods: ['all'] }],
    ui_permissions: { modify_service: ['/weather'] },
  });
  await withScope(app, {
    _id: 'weather-toggler',
    server_access: [{ server: 'weather', methods: ['all'] }],
    ui_permissions: { toggle_service: ['/weather'] },
  });
  return {
    app,
    admin: await asUser(app, ['mcp-registry-admin'], 'alice'),
    reader: await asUser(app, ['mcp-registry-user'], 'bob'),
    editor: await asUser(app, ['weather-editor'], 'eve'),
    toggler: await asUser(app, ['weather-toggler'], 'tom'),
  };
}

t.test('schemes, defaults and 400s', async (t) => {
  const { app, admin } = await setup(t);
  const reg = (fields: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: { ...FORM, ...admin },
      payload: form({ ...weather, ...fields }),
    });
  const bearer = await reg({ path: '/b', auth_scheme: 'bearer', auth_credential: SECRET });
  t.equal(bearer.statusCode, 201);
  t.match(bearer.json(), { auth_scheme: 'bearer', auth_header_name: 'Authorization', auth_credential_encrypted: true });
  t.match((await reg({ path: '/k', auth_scheme: 'api_key', auth_credential: SECRET })).json(), {
    auth_scheme: 'api_key',
    auth_header_name: 'X-API-Key',
  });
  t.match(
    (
      await reg({ path: '/h', auth_scheme: 'api_key', auth_credential: SECRET, auth_header_name: 'X-Backend-Key' })
    ).json(),
    { auth_header_name: 'X-Backend-Key' },
  );
  for (const [fields, code] of [
    [{ path: '/x1', auth_scheme: 'basic', auth_credential: SECRET }, 'SB_ERR_REGISTRY_AUTH_SCHEME'],
    [{ path: '/x2', auth_scheme: 'bearer' }, 'SB_ERR_REGISTRY_CREDENTIAL_REQUIRED'],
    [{ path: '/x3', auth_scheme: 'api_key', auth_credential: '' }, 'SB_ERR_REGISTRY_CREDENTIAL_REQUIRED'],
    [{ path: '/x4', auth_credential: SECRET }, 'SB_ERR_REGISTRY_CREDENTIAL_UNEXPECTED'],
    [
      { path: '/x5', auth_scheme: 'api_key', auth_credential: SECRET, auth_header_name: 'bad header' },
      'SB_ERR_REGISTRY_AUTH_HEADER',
    ],
  ] as const) {
    const r = await reg(fields);
    t.equal(r.statusCode, 400, JSON.stringify(fields));
    t.equal(r.json().code, code);
    t.notMatch(r.body, SECRET);
  }
  t.equal(catalogOf(app).servers.get('/x1'), undefined, 'nothing stored on a refused registration');

  // Backend headers are built from the decrypted credential, in memory only.
  t.same(catalogOf(app).servers.backendHeaders('/b'), { Authorization: `Bearer ${SECRET}` });
  t.same(catalogOf(app).servers.backendHeaders('/h'), { 'X-Backend-Key': SECRET });
  t.equal(catalogOf(app).servers.decryptCredential('/k'), SECRET);
  const stored = await app.sb.store.collection<Record<string, unknown>>('registry_servers').get('/b');
  t.notMatch(JSON.stringify(stored), SECRET, 'only ciphertext at rest');
  t.equal(catalogOf(app).fernet.decryptString(String(stored!.auth_credential_ciphertext)), SECRET);
});

t.test('PATCH/PUT credential: rights, rotation, removal, audit', async (t) => {
  const { app, admin, reader, editor, toggler } = await setup(t);
  await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...FORM, ...admin },
    payload: form(weather),
  });
  const patch = (headers: Record<string, string>, payload: object) =>
    app.inject({ method: 'PATCH', url: '/api/servers/weather/auth-credential', headers, payload });

  t.equal(
    (await patch(reader, { auth_scheme: 'bearer', auth_credential: SECRET })).statusCode,
    403,
    'no register/modify right',
  );
  t.equal(
    (await patch(toggler, { auth_scheme: 'bearer', auth_credential: SECRET })).statusCode,
    403,
    'toggle right is not enough',
  );
  t.equal((await patch({}, { auth_scheme: 'bearer', auth_credential: SECRET })).statusCode, 401);
  t.equal((await patch(editor, { auth_scheme: 'digest', auth_credential: SECRET })).statusCode, 400);
  t.equal((await patch(editor, { auth_scheme: 'bearer' })).statusCode, 400);
  t.equal((await patch(editor, { auth_credential: SECRET })).statusCode, 422, 'auth_scheme is required');
  t.equal(
    (
      await app.inject({
        method: 'PATCH',
        url: '/api/servers/nope/auth-credential',
        headers: admin,
        payload: { auth_scheme: 'none' },
      })
    ).statusCode,
    404,
  );

  const ok = await patch(editor, { auth_scheme: 'bearer', auth_credential: SECRET });
  t.equal(ok.statusCode, 200, ok.body);
  t.same(ok.json(), {
    message: 'Backend credential of /weather updated',
    path: '/weather',
    auth_scheme: 'bearer',
    auth_header_name: 'Authorization',
    auth_credential_encrypted: true,
  });

  const put = await app.inject({
    method: 'PUT',
    url: '/api/servers/weather/credentials',
    headers: admin,
    payload: { auth_scheme: 'api_key', auth_credential: `${SECRET}-2`, auth_header_name: 'X-Key' },
  });
  t.equal(put.statusCode, 200);
  t.match(put.json(), { auth_scheme: 'api_key', auth_header_name: 'X-Key' });
  t.same(catalogOf(app).servers.backendHeaders('/weather'), { 'X-Key': `${SECRET}-2` });

  // An edit that does not resend the secret keeps it.
  const edit = await app.inject({
    method: 'PUT',
    url: '/api/servers/weather',
    headers: { ...FORM, ...editor },
    payload: form({ description: 'new', auth_scheme: 'api_key' }),
  });
  t.equal(edit.statusCode, 200);
  t.equal(catalogOf(app).servers.decryptCredential('/weather'), `${SECRET}-2`);

  const cleared = await patch(admin, { auth_scheme: 'none' });
  t.match(cleared.json(), { auth_scheme: 'none', auth_credential_encrypted: false, auth_header_name: null });
  t.same(catalogOf(app).servers.backendHeaders('/weather'), {});

  const audit = await catalogOf(app).audit.list('/weather');
  t.same(
    audit.map((a) => [a.username, a.action, a.auth_scheme]),
    [
      ['eve', 'set', 'bearer'],
      ['alice', 'set', 'api_key'],
      ['alice', 'cleared', 'none'],
    ],
  );
  t.ok(
    audit.every((a) => !Number.isNaN(Date.parse(a.at))),
    'each entry has a time',
  );
  t.notMatch(JSON.stringify(audit), SECRET, 'the audit never holds the credential');
  const raw: unknown[] = [];
  for await (const [, v] of app.sb.store.collection('registry_credential_audit').entries()) raw.push(v);
  t.equal(raw.length, 3, 'kept in the audit collection');
});

t.test('no endpoint that returns a server ever returns the credential or its ciphertext', async (t) => {
  const { app, admin, reader } = await setup(t);
  const basic = adminBasic(app);
  const bodies: Array<[string, string]> = [];
  const call = async (method: string, url: string, headers: Record<string, string>, payload?: string | object) => {
    const r = await app.inject({ method: method as 'GET', url, headers, payload });
    t.ok(r.statusCode < 400, `${method} ${url} -> ${r.statusCode} ${r.statusCode >= 400 ? r.body : ''}`);
    bodies.push([`${method} ${url}`, r.body + JSON.stringify(r.headers)]);
  };
  const secretForm = (extra: Record<string, string>) =>
    form({ ...weather, auth_scheme: 'bearer', auth_credential: SECRET, ...extra });

  await call(
    'POST',
    '/api/servers/register',
    { ...FORM, ...admin },
    secretForm({
      tool_list_json: JSON.stringify([{ name: 'forecast', description: 'x', inputSchema: { type: 'object' } }]),
    }),
  );
  await call('POST', '/api/register', { ...FORM, ...admin }, secretForm({ path: '/ui' }));
  await call('POST', '/register', { ...FORM, ...admin }, secretForm({ path: '/old' }));
  await call('POST', '/api/internal/register', { ...FORM, ...basic }, secretForm({ path: '/internal' }));
  await call(
    'POST',
    '/api/internal/register',
    { ...FORM, ...basic },
    secretForm({ path: '/internal', overwrite: 'true' }),
  );
  await call('PUT', '/api/servers/weather', { ...FORM, ...admin }, secretForm({ description: 'again' }));
  await call('PATCH', '/api/servers/weather/auth-credential', admin, {
    auth_scheme: 'bearer',
    auth_credential: SECRET,
  });
  await call('PUT', '/api/servers/weather/credentials', admin, { auth_scheme: 'bearer', auth_credential: SECRET });
  await call('POST', '/api/servers/weather/versions', admin, { version: 'v2' });
  await call('POST', '/api/servers/weather/rating', reader, { rating: 5 });
  await call(
    'POST',
    '/api/servers/groups/add',
    { ...FORM, ...admin },
    form({ server_name: 'weather', group_names: 'g' }),
  );
  await call(
    'POST',
    '/api/internal/add-to-groups',
    { ...FORM, ...basic },
    form({ server_name: 'weather', group_names: 'h' }),
  );
  for (const h of [admin, reader]) {
    await call('GET', '/api/servers/weather', h);
    await call('GET', '/api/servers', h);
    await call('GET', '/api/server_details/weather', h);
    await call('GET', '/api/server_details/all', h);
    await call('GET', '/api/tools/weather', h);
    await call('GET', '/api/tools/all', h);
    await call('GET', '/api/servers/weather/versions', h);
    await call('GET', '/api/servers/weather/rating', h);
    await call('GET', '/api/', h);
    await call('GET', '/v0/servers', h);
    await call('GET', '/v0/servers/io.switchboard%2Fweather/versions', h);
    await call('GET', '/v0/servers/io.switchboard%2Fweather/versions/latest', h);
  }
  await call('GET', '/api/edit/weather', admin);
  await call('GET', '/edit/weather', admin);
  await call('GET', '/api/internal/list', basic);
  await call('GET', '/.well-known/mcp-servers', {});
  await call('POST', '/api/servers/toggle', { ...FORM, ...admin }, form({ path: '/weather', new_state: 'false' }));
  await call('POST', '/api/toggle/weather', { ...FORM, ...admin }, form({ enabled: 'true' }));
  await call('POST', '/toggle/weather', { ...FORM, ...admin }, form({ enabled: 'on' }));
  await call('POST', '/api/internal/toggle', { ...FORM, ...basic }, form({ service_path: '/weather' }));
  await call('POST', '/api/edit/weather', { ...FORM, ...admin }, secretForm({}));
  await call('POST', '/edit/weather', { ...FORM, ...admin }, secretForm({}));
  await call('GET', '/openapi.json', {});

  const ciphertexts = catalogOf(app)
    .servers.list()
    .map((s) => s.auth_credential_ciphertext)
    .filter((c): c is string => !!c);
  t.ok(ciphertexts.length >= 4, 'credentials were stored');
  for (const [what, body] of bodies) {
    t.notOk(body.includes(SECRET), `${what}: no plaintext`);
    t.notOk(
      ciphertexts.some((c) => body.includes(c) || body.includes(c.slice(0, 40))),
      `${what}: no ciphertext`,
    );
  }
  t.ok(
    bodies.some(([, b]) => b.includes('"auth_credential_encrypted":true')),
    'the flag is returned',
  );
});

t.test('credential changes are logged with user and scheme, never the credential', async (t) => {
  // The app logs to a stream of ours, so the test sees exactly what an operator's log would hold.
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  const app = await makeApp(t, {}, { logLevel: 'info', logStream });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...FORM, ...admin },
    payload: form({ ...weather, auth_scheme: 'bearer', auth_credential: SECRET }),
  });
  await app.inject({
    method: 'PATCH',
    url: '/api/servers/weather/auth-credential',
    headers: admin,
    payload: { auth_scheme: 'api_key', auth_credential: `${SECRET}-rotated` },
  });
  await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...FORM, ...admin },
    payload: form({ ...weather, path: '/bad', auth_scheme: 'bogus', auth_credential: SECRET }),
  });
  await new Promise((r) => setTimeout(r, 50));
  const log = lines.join('');
  const audits = log
    .split('\n')
    .filter((l) => l.includes('"audit":"backend_credential"'))
    .map((l) => JSON.parse(l));
  t.equal(audits.length, 2, 'one line per change');
  t.match(audits[0], {
    username: 'alice',
    path: '/weather',
    auth_scheme: 'bearer',
    action: 'set',
    at: String,
    via: 'POST /api/servers/register',
  });
  t.match(audits[1], { username: 'alice', auth_scheme: 'api_key', via: 'PATCH /api/servers/{path}/auth-credential' });
  t.ok(lines.length > 2, 'request logs were captured too');
  t.notOk(log.includes(SECRET), 'the credential never reaches a log line');
});
