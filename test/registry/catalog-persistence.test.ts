import t from 'tap';
import { makeApp, tempDir } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';
import { openStore } from '../../core/store.ts';
import { redisReplicas } from '../fixtures/redis-server.ts';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const SECRET = 'persisted-credential-value';

t.test('SQLite under DATA_DIR: everything survives a restart, credentials stay readable', async (t) => {
  const dataDir = tempDir();
  const first = await openStore({ backend: 'sqlite', dataDir });
  const a = await makeApp(t, {}, { store: first, env: { DATA_DIR: dataDir } });
  const admin = await asUser(a, ['mcp-registry-admin'], 'alice');
  t.equal(
    (
      await a.inject({
        method: 'POST',
        url: '/api/servers/register',
        headers: { ...FORM, ...admin },
        payload: form({
          name: 'Weather',
          description: 'd',
          path: '/weather',
          proxy_pass_url: 'http://127.0.0.1:9/',
          auth_scheme: 'bearer',
          auth_credential: SECRET,
          version: 'v1',
        }),
      })
    ).statusCode,
    201,
  );
  await a.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...FORM, ...admin },
    payload: form({
      name: 'Weather',
      description: 'd2',
      path: '/weather',
      proxy_pass_url: 'http://127.0.0.1:9/',
      version: 'v2',
      set_as_default: 'true',
      auth_scheme: 'bearer',
      auth_credential: SECRET,
    }),
  });
  await a.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: { ...FORM, ...admin },
    payload: form({ path: '/weather', new_state: 'false' }),
  });
  await a.inject({ method: 'POST', url: '/api/servers/weather/rating', headers: admin, payload: { rating: 4 } });
  await a.inject({
    method: 'POST',
    url: '/api/servers/groups/add',
    headers: { ...FORM, ...admin },
    payload: form({ server_name: 'weather', group_names: 'finance' }),
  });
  t.equal(
    (
      await a.inject({
        method: 'POST',
        url: '/api/agents/register',
        headers: admin,
        payload: { name: 'helper', url: 'https://a.example/', skills: [{ name: 'translate' }] },
      })
    ).statusCode,
    201,
  );
  const before = (await a.inject({ url: '/api/servers/weather', headers: admin })).json();
  await a.close();
  await first.close();

  const second = await openStore({ backend: 'sqlite', dataDir });
  t.teardown(() => second.close());
  const b = await makeApp(t, {}, { store: second, env: { DATA_DIR: dataDir } });
  const admin2 = await asUser(b, ['mcp-registry-admin'], 'alice');
  const after = (await b.inject({ url: '/api/servers/weather', headers: admin2 })).json();
  t.same(
    { ...after, health_status: undefined, last_checked_iso: undefined },
    { ...before, health_status: undefined, last_checked_iso: undefined },
    'server record identical after restart',
  );
  t.equal(after.is_enabled, false);
  t.same(
    after.versions.map((v: { version: string }) => v.version),
    ['v1', 'v2'],
  );
  t.same(after.groups, ['finance']);
  t.equal(after.num_stars, 4);
  t.equal(catalogOf(b).servers.decryptCredential('/weather'), SECRET, 'ENCRYPTION_KEY reused from DATA_DIR');
  t.equal((await catalogOf(b).audit.list('/weather')).length, 2, 'the credential audit survives too');
  const agent = await b.inject({ url: '/api/agents/helper', headers: admin2 });
  t.match(agent.json(), { name: 'helper', skills: [{ name: 'translate' }] });
  t.same(
    (
      await b.inject({
        method: 'POST',
        url: '/api/agents/discover',
        headers: admin2,
        payload: { skills: ['translate'] },
      })
    )
      .json()
      .agents.map((x: { path: string }) => x.path),
    ['/helper'],
    'discovery index rebuilt from the store',
  );
});

t.test('Redis: a second replica sees writes of the first (generation counter)', async (t) => {
  const url = 'redis://127.0.0.1:6379/13';
  const stores = await redisReplicas(t, url, [
    'registry_servers',
    'registry_agents',
    'registry_skills',
    'registry_ratings',
    'registry_generation_counters',
  ]);
  if (!stores) return;
  const [s1, s2] = stores;
  const dataDir = tempDir();
  const a = await makeApp(t, {}, { store: s1, env: { DATA_DIR: dataDir } });
  const b = await makeApp(t, {}, { store: s2, env: { DATA_DIR: dataDir } });
  const adminA = await asUser(a, ['mcp-registry-admin'], 'alice');
  const adminB = await asUser(b, ['mcp-registry-admin'], 'alice');
  t.equal((await b.inject({ url: '/api/servers', headers: adminB })).json().servers.length, 0);
  await a.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...FORM, ...adminA },
    payload: form({ name: 'R', description: 'd', path: '/r', proxy_pass_url: 'http://127.0.0.1:9/' }),
  });
  t.same(
    (await b.inject({ url: '/api/servers', headers: adminB })).json().servers.map((s: { path: string }) => s.path),
    ['/r'],
    'replica B reloaded after A wrote',
  );
  await b.inject({ method: 'DELETE', url: '/api/servers/r', headers: adminB });
  t.equal((await a.inject({ url: '/api/servers/r', headers: adminA })).statusCode, 404, 'and the other way round');
});
