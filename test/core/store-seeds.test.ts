import t from 'tap';
import { openStore } from '../../core/store.ts';
import { SENTINEL_COLLECTION, SENTINEL_KEY, StoreSeeds } from '../../core/store-seeds.ts';
import { buildApp } from '../../plugins/app.ts';
import type { ScopeDocument } from '../../plugins/registry/auth/scope-store.ts';
import { tempDir } from '../helpers/app.ts';
import { noopOnlyRoot } from '../fixtures/roots.ts';
import { startRedis, waitExit } from '../fixtures/redis-server.ts';

const quiet = { warn: () => {}, error: () => {} };

/** Polls `probe` until it returns true, for at most `ms`; false when it never did (the caller fails the test). */
async function eventually(probe: () => Promise<boolean>, ms = 20_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await probe().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

t.test('a seed runs at once, and again only when the sentinel is gone', async (t) => {
  const store = await openStore({ backend: 'memory' });
  const warned: unknown[] = [];
  const seeds = new StoreSeeds(store, { ...quiet, warn: (o) => warned.push(o) });
  let runs = 0;
  await seeds.add('counter', async () => {
    runs++;
  });
  t.equal(runs, 1, 'add() seeds at once');
  t.ok(await store.collection(SENTINEL_COLLECTION).get(SENTINEL_KEY), 'and writes the sentinel');
  t.equal(await seeds.check(), false, 'a store that kept its sentinel is left alone');
  t.equal(runs, 1);
  t.equal(seeds.lastReseed, undefined);

  await store.collection(SENTINEL_COLLECTION).clear();
  const [a, b] = await Promise.all([seeds.check(), seeds.check()]);
  t.ok(a && b, 'an emptied store is noticed');
  t.equal(runs, 2, 'concurrent checks share one re-seed');
  t.same(seeds.lastReseed?.seeds, ['counter'], 'and it is remembered for /readyz');
  t.equal(warned.length, 1, 'and logged once');
  t.equal(await seeds.check(), false, 'the sentinel is back');
});

t.test('a seed check on a store that cannot be read rejects and re-seeds nothing', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const store = await openStore({ backend: 'redis', url: redis.url, commandTimeoutMs: 500 });
  t.teardown(() => store.close());
  const seeds = new StoreSeeds(store, quiet);
  let runs = 0;
  await seeds.add('counter', async () => {
    runs++;
  });
  redis.stop();
  await waitExit(redis.child);
  await t.rejects(seeds.check(), { code: 'SB_ERR_STORE_UNAVAILABLE' });
  t.equal(runs, 1, 'an outage is not mistaken for an empty store');
});

t.test(
  'Redis restarted empty: file scopes come back, the Basic admin stays admin, /readyz reports the re-seed',
  async (t) => {
    let redis = await startRedis();
    t.teardown(() => redis.stop());
    const app = await buildApp({
      env: { DATA_DIR: tempDir() },
      config: {
        store: { url: redis.url, command_timeout_ms: 1000 },
        registry: { admin_password: 'seed-test-admin', health: { interval_seconds: 0 } },
      },
      logLevel: 'silent',
      discovery: { builtinRoot: noopOnlyRoot() },
    });
    t.teardown(() => app.close());
    await app.ready();
    const basic = { authorization: `Basic ${Buffer.from('admin:seed-test-admin').toString('base64')}` };
    const scopes = app.sb.store.collection<ScopeDocument>('registry_scopes');
    const fileScopes: string[] = [];
    for await (const [id, doc] of scopes.entries()) if (doc.system) fileScopes.push(id);
    t.ok(fileScopes.length > 0, 'the scope files were seeded');
    t.equal(
      (await app.inject({ url: '/api/auth/me', headers: basic })).json().is_admin,
      true,
      'the Basic admin is admin',
    );

    redis.stop();
    await waitExit(redis.child);
    redis = await startRedis(redis.port);

    // The background check (every few seconds) repairs the store without anyone calling /readyz.
    t.ok(
      await eventually(async () => (await scopes.get(fileScopes[0])) !== undefined),
      'the file scopes are written back by themselves',
    );
    for (const id of fileScopes) t.ok(await scopes.get(id), `scope ${id} is back in the store`);

    const ready = await app.inject({ url: '/readyz' });
    t.equal(ready.statusCode, 200);
    t.equal(ready.json().checks['store/redis'], 'ok');
    t.same(
      ready.json().reseeded?.seeds,
      ['registry scopes'],
      '/readyz reports that the store was found emptied and seeded again',
    );
    t.ok(Date.parse(ready.json().reseeded?.at) > 0);

    // The scope view reloads from the store every ~10 s; the admin must be admin before and after.
    const me = await app.inject({ url: '/api/auth/me', headers: basic });
    t.equal(me.json().is_admin, true, 'the Basic admin is still admin');
    const reg = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: basic,
      payload: {
        server_name: 'After',
        description: 'registered after the restart',
        path: '/after',
        proxy_pass_url: 'http://127.0.0.1:9',
      },
    });
    t.equal(reg.statusCode, 201, `the Basic admin can register again: ${reg.body}`);
  },
);

t.test('a file scope missing from the store stands in from its file until it is seeded again', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const app = await buildApp({
    env: { DATA_DIR: tempDir() },
    config: { store: { url: redis.url }, registry: { admin_password: 'seed-test-admin' } },
    logLevel: 'silent',
    discovery: { builtinRoot: noopOnlyRoot() },
  });
  t.teardown(() => app.close());
  await app.ready();
  app.sb.seeds.stop(); // only the scope view is under test here, not the re-seed
  const basic = { authorization: `Basic ${Buffer.from('admin:seed-test-admin').toString('base64')}` };
  const scopes = app.sb.store.collection<ScopeDocument>('registry_scopes');
  await scopes.clear();
  // A scope change reloads the view from the store at once.
  const created = await app.inject({
    method: 'POST',
    url: '/api/internal/create-group',
    headers: basic,
    payload: { group_name: 'late-group', description: 'reloads the scopes' },
  });
  t.equal(created.statusCode, 201, `a group was created: ${created.body}`);
  t.equal(
    (await app.inject({ url: '/api/auth/me', headers: basic })).json().is_admin,
    true,
    'the admin keeps its file-defined rights',
  );
});
