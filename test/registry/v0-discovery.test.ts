import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();

async function setup(t: Parameters<typeof makeApp>[0], config: Record<string, unknown> = {}) {
  const app = await makeApp(t, config);
  await withScope(app, {
    _id: 'two',
    server_access: [
      { server: 's03', methods: ['all'] },
      { server: 's07', methods: ['all'] },
    ],
  });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  for (let i = 9; i >= 0; i--) {
    const r = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: { ...FORM, ...admin },
      payload: form({
        name: `S${i}`,
        description: `Server ${i}`,
        path: `/s0${i}`,
        proxy_pass_url: `http://127.0.0.1:9/${i}`,
        provider_url: 'https://example.org',
        tool_list_json: JSON.stringify([{ name: `t${i}`, description: 'tool' }]),
      }),
    });
    if (r.statusCode !== 201) throw new Error(r.body);
  }
  return {
    app,
    admin,
    reader: await asUser(app, ['mcp-registry-user'], 'bob'),
    two: await asUser(app, ['two'], 'tess'),
  };
}

t.test('/v0 pagination: cursor = last name, limits, visibility', async (t) => {
  const { app, reader, two } = await setup(t);
  const page1 = await app.inject({ url: '/v0/servers?limit=4', headers: reader });
  t.equal(page1.statusCode, 200);
  const b1 = page1.json();
  t.same(
    b1.servers.map((s: { name: string }) => s.name),
    ['io.switchboard/s00', 'io.switchboard/s01', 'io.switchboard/s02', 'io.switchboard/s03'],
  );
  t.same(b1._meta.pagination, { hasMore: true, nextCursor: 'io.switchboard/s03', count: 4 });
  t.match(b1.servers[0], {
    description: 'Server 0',
    version: 'v1.0.0',
    homepage: 'https://example.org/',
    resources: [{ uri: /\/s00\/mcp$/, mimeType: 'application/json' }],
  });
  const names: string[] = [];
  let cursor: string | null = null;
  do {
    const r: { json(): { servers: Array<{ name: string }>; _meta: { pagination: { nextCursor: string | null } } } } =
      await app.inject({
        url: `/v0/servers?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        headers: reader,
      });
    const b = r.json();
    names.push(...b.servers.map((s: { name: string }) => s.name));
    cursor = b._meta.pagination.nextCursor;
  } while (cursor);
  t.equal(names.length, 10);
  t.equal(new Set(names).size, 10, 'no repeats across pages');
  t.same(
    (await app.inject({ url: '/v0/servers', headers: reader })).json()._meta.pagination,
    { hasMore: false, nextCursor: null, count: 10 },
    'default limit 100',
  );

  t.same(
    (await app.inject({ url: '/v0/servers', headers: two })).json().servers.map((s: { name: string }) => s.name),
    ['io.switchboard/s03', 'io.switchboard/s07'],
  );
  t.same(
    (await app.inject({ url: '/v0/servers?limit=1&cursor=io.switchboard%2Fs03', headers: two })).json()._meta
      .pagination,
    { hasMore: false, nextCursor: null, count: 1 },
  );

  for (const bad of ['0', '1001', 'x']) {
    const r = await app.inject({ url: `/v0/servers?limit=${bad}`, headers: reader });
    t.equal(r.statusCode, 422, `limit=${bad}`);
    t.equal(r.json().code, 'SB_ERR_VALIDATION');
  }
  t.equal((await app.inject({ url: '/v0/servers?limit=1000', headers: reader })).statusCode, 200);
  t.equal((await app.inject({ url: '/v0/servers' })).statusCode, 401);
  const bound = {
    authorization: `Bearer ${await mintToken(app, { username: 'alice', scopes: ['mcp-registry-admin'], resource: { type: 'server', id: 's03' } })}`,
  };
  t.equal(
    (await app.inject({ url: '/v0/servers', headers: bound })).statusCode,
    403,
    'bound tokens cannot reach the registry API',
  );
});

t.test('/v0 versions and latest; 404 for servers the caller cannot see', async (t) => {
  const { app, admin, two } = await setup(t);
  await app.inject({
    method: 'POST',
    url: '/api/servers/s03/versions',
    headers: admin,
    payload: { version: 'v2.0.0' },
  });
  const versions = await app.inject({ url: '/v0/servers/io.switchboard%2Fs03/versions', headers: two });
  t.equal(versions.statusCode, 200);
  t.same(
    versions.json().map((v: { version: string; is_latest: boolean }) => [v.version, v.is_latest]),
    [
      ['v1.0.0', false],
      ['v2.0.0', true],
    ],
  );
  const latest = await app.inject({ url: '/v0/servers/io.switchboard%2Fs03/versions/latest', headers: two });
  t.match(latest.json(), {
    name: 'io.switchboard/s03',
    version: 'v2.0.0',
    is_latest: true,
    details: { path: '/s03', tools: [{ name: 't3' }] },
  });
  t.notOk('proxy_pass_url' in latest.json().details);
  t.equal(
    (await app.inject({ url: '/v0/servers/io.switchboard%2Fs03/versions/v1.0.0', headers: two })).json().is_latest,
    false,
  );
  t.equal((await app.inject({ url: '/v0/servers/io.switchboard%2Fs03/versions/v9', headers: two })).statusCode, 404);
  for (const url of [
    '/v0/servers/io.switchboard%2Fs01/versions',
    '/v0/servers/io.switchboard%2Fs01/versions/latest',
    '/v0/servers/io.switchboard%2Fnope/versions',
    '/v0/servers/other.ns%2Fs03/versions',
  ]) {
    const r = await app.inject({ url, headers: two });
    t.equal(r.statusCode, 404, `${url} -> 404, never 403`);
  }
});

t.test('/.well-known/mcp-servers: enabled only, auth info, tools preview, cache headers; /health', async (t) => {
  const { app, admin } = await setup(t, { registry: { well_known_ttl_seconds: 60 } });
  await app.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: { ...FORM, ...admin },
    payload: form({ path: '/s05', new_state: 'false' }),
  });
  await catalogOf(app).servers.patch('/s06', (r) => ({ ...r, tags: [...r.tags, 'security-pending'] }));
  const r = await app.inject({ url: '/.well-known/mcp-servers' });
  t.equal(r.statusCode, 200);
  t.equal(r.headers['cache-control'], 'public, max-age=60');
  const b = r.json();
  t.equal(b.servers.length, 8, 'disabled and security-pending servers are left out');
  t.notOk(b.servers.some((s: { name: string }) => /s0[56]$/.test(s.name)));
  t.match(b.servers[0], {
    name: 'io.switchboard/s00',
    display_name: 'S0',
    mcp: { transport: 'streamable-http', url: /^http:\/\/[^/]+\/s00\/mcp$/ },
    auth: { required: true, type: 'bearer', header: 'X-Authorization' },
    tools_preview: [{ name: 't0' }],
    tool_count: 1,
  });
  t.match(b._meta, { registry: /^http:/, updated_at: String, count: 8 });

  const defaults = await makeApp(t, { registry: { deployment_mode: 'registry-only' } });
  const admin2 = await asUser(defaults, ['mcp-registry-admin'], 'alice');
  await defaults.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...FORM, ...admin2 },
    payload: form({
      name: 'K',
      description: 'd',
      path: '/k',
      proxy_pass_url: 'http://127.0.0.1:9/k',
      auth_scheme: 'api_key',
      auth_credential: 'zzz-secret',
    }),
  });
  const r2 = await defaults.inject({ url: '/.well-known/mcp-servers' });
  t.equal(r2.headers['cache-control'], 'public, max-age=300', 'default TTL');
  t.match(r2.json().servers[0], {
    mcp: { url: 'http://127.0.0.1:9/k' },
    auth: { required: true, type: 'api_key', header: 'X-API-Key' },
  });
  t.notMatch(r2.body, 'zzz-secret');

  const h = await app.inject({ url: '/health' });
  t.equal(h.statusCode, 200);
  t.match(h.json(), { status: 'healthy', servers: 10, agents: 0, skills: 0, store: 'ok' });
});
