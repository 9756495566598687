import t from 'tap';
import { openStore } from '../../core/store.ts';
import { SENTINEL_COLLECTION, SENTINEL_KEY, StoreSeeds } from '../../core/store-seeds.ts';
import { makeApp } from '../helpers/app.ts';
import { adminSession } from '../helpers/registry-auth.ts';
import { startRedis, waitExit, type PrivateRedis } from '../fixtures/redis-server.ts';
import { ALICE_BOB_ROOT, apiKeyUsers } from '../fixtures/api-key-users.ts';

/**
 * A logged-out session cookie must never be accepted again, also after the
 * store that recorded the logout (Redis without persistence) is restarted
 * empty. Sessions carry the time they were issued and the store's seed
 * sentinel the time its data began (core/store-seeds.ts): a session older than
 * the data is refused, so every cookie issued before the loss dies with it,
 * logged out or not, and new logins work at once.
 */

const RECOVERY_DEADLINE_MS = 40_000;

t.test('logged-out sessions stay dead after Redis restarts empty', async (t) => {
  t.setTimeout(900_000);
  let redis: PrivateRedis = await startRedis();
  t.teardown(() => redis.stop());
  const store = await openStore({ backend: 'redis', url: redis.url, commandTimeoutMs: 2000 });
  // api_key platform auth: /api/v1 admits the session cookie only through the registry's session check.
  const app = await makeApp(t, apiKeyUsers(ALICE_BOB_ROOT), { store });
  t.teardown(() => store.close());

  const me = (cookie: string) => app.inject({ url: '/api/auth/me', headers: { cookie } });
  const whoami = (cookie: string) => app.inject({ url: '/api/v1/auth/whoami', headers: { cookie } });

  const loggedOut = await adminSession(app);
  const kept = await adminSession(app);
  t.equal((await me(loggedOut.cookie)).statusCode, 200, 'a fresh session works');
  const out = await app.inject({ method: 'POST', url: '/api/auth/logout', headers: loggedOut.headers });
  t.equal(out.statusCode, 302, `logout: ${out.body}`);
  t.equal((await me(loggedOut.cookie)).statusCode, 401, 'logged out: refused');
  t.equal((await me(kept.cookie)).statusCode, 200, 'the other session still works');

  redis.stop();
  await waitExit(redis.child);
  redis = await startRedis(redis.port);

  // Wait for the store client to reconnect (a read answers again).
  const until = Date.now() + RECOVERY_DEADLINE_MS;
  let back = false;
  while (!back && Date.now() < until) {
    back = await store
      .collection('session_revival_probe')
      .get('k')
      .then(
        () => true,
        () => false,
      );
    if (!back) await new Promise((r) => setTimeout(r, 250));
  }
  t.ok(back, 'the store answers again after the restart');

  const revived = await me(loggedOut.cookie);
  t.equal(revived.statusCode, 401, `the logged-out cookie is refused after the empty restart: ${revived.body}`);
  t.match(revived.json(), { code: 'SB_ERR_AUTH_UNAUTHENTICATED', detail: /log in again/ });
  const w = await whoami(loggedOut.cookie);
  t.equal(w.statusCode, 401, `and on /api/v1 (the console session principal): ${w.body}`);
  // Whether it was logged out is lost with the data: every session issued before the loss dies.
  t.equal((await me(kept.cookie)).statusCode, 401, 'a session issued before the loss is refused too');

  const fresh = await adminSession(app);
  const after = await me(fresh.cookie);
  t.equal(after.statusCode, 200, `a new login works at once: ${after.body}`);
  t.equal(after.json().username, 'admin');
  t.equal((await whoami(fresh.cookie)).statusCode, 200, 'on /api/v1 too');
  t.equal((await me(loggedOut.cookie)).statusCode, 401, 'the logged-out cookie stays refused');

  // Its own logout is recorded in the new data and holds.
  await app.inject({ method: 'POST', url: '/api/auth/logout', headers: fresh.headers });
  t.equal((await me(fresh.cookie)).statusCode, 401, 'a logout after the restart holds');
});

t.test('a session issued before the store lost its data is refused, also on the in-memory store', async (t) => {
  const store = await openStore({ backend: 'memory' });
  const first = await makeApp(t, {}, { store });
  const s = await adminSession(first);
  t.equal((await first.inject({ url: '/api/auth/me', headers: { cookie: s.cookie } })).statusCode, 200);
  // What an emptied store looks like to the seeds: the sentinel is gone (it goes with everything else).
  await store.collection('switchboard_meta').clear();
  const res = await first.inject({ url: '/api/auth/me', headers: { cookie: s.cookie } });
  t.equal(res.statusCode, 401, 'the store lost its data: the session issued before is refused');
  const again = await adminSession(first);
  t.equal((await first.inject({ url: '/api/auth/me', headers: { cookie: again.cookie } })).statusCode, 200);
});

t.test('StoreSeeds.epoch: kept across marks, new when the store is found emptied', async (t) => {
  const store = await openStore({ backend: 'memory' });
  const seeds = new StoreSeeds(store, { warn: () => {}, error: () => {} });
  await seeds.mark();
  const first = await seeds.epoch();
  await new Promise((r) => setTimeout(r, 5));
  await seeds.mark();
  await seeds.add('nothing', async () => {});
  t.equal(await seeds.epoch(), first, 'a process starting on the same data (mark, add) keeps it');
  await store.collection(SENTINEL_COLLECTION).clear();
  const second = await seeds.epoch();
  t.ok(second > first, 'an emptied store is seeded again at once, with a later epoch');
  t.ok(seeds.lastReseed, 'and the re-seed is remembered for /readyz');
  // A sentinel from a version without `since` gets one, and keeps it.
  await store.collection(SENTINEL_COLLECTION).set(SENTINEL_KEY, { at: new Date().toISOString() });
  const third = await seeds.epoch();
  t.equal(await seeds.epoch(), third);
});
