import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { openStore } from '../../core/store.ts';
import {
  increment,
  setMany,
  incrementAcross,
  incrementAcrossProcesses,
  prefixIsolation,
  setIfAbsent,
} from './store-contract.ts';
import { isSwitchboardError } from '../../core/errors.ts';
import { buildApp } from '../../plugins/app.ts';
import { tempDir } from '../helpers/app.ts';
import { noopOnlyRoot } from '../fixtures/roots.ts';
import { startRedis, waitExit } from '../fixtures/redis-server.ts';

async function routes(app: FastifyInstance) {
  app.get('/test/notes/:key', async (request, reply) => {
    const v = await app.sb.store.collection<{ text: string }>('notes').get((request.params as { key: string }).key);
    return v ?? reply.status(404).send({ detail: 'no note', code: 'SB_ERR_TEST_MISSING' });
  });
}

t.test('REDIS_URL selects the Redis store; the collection contract holds there', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const app = await buildApp({
    env: { REDIS_URL: redis.url, DATA_DIR: tempDir() },
    config: {},
    logLevel: 'silent',
    discovery: { builtinRoot: noopOnlyRoot() },
  });
  t.teardown(() => app.close());
  await app.ready();
  t.equal(app.sb.store.backend, 'redis');
  t.equal(app.sb.store.location, `${redis.url}`.replace(/\/?$/, ''), 'location without credentials');

  const c = app.sb.store.collection<{ n: number }>('contract');
  await c.set('a', { n: 1 });
  await c.set('b', { n: 2 }, 60_000);
  await app.sb.store.collection('other').set('a', { n: 9 });
  t.same(await c.get('a'), { n: 1 });
  t.same(await c.getMany(['a', 'zz', 'b']), [{ n: 1 }, undefined, { n: 2 }]);
  const listed: string[] = [];
  for await (const [k] of c.entries()) listed.push(k);
  t.same(listed.sort(), ['a', 'b'], 'entries stay in their collection');
  t.equal(await c.delete('a'), true);
  await c.clear();
  t.same(await app.sb.store.collection('other').get('a'), { n: 9 }, 'clear is per collection');
  const ready = await app.inject({ url: '/readyz' });
  t.equal(ready.json().checks['store/redis'], 'ok');
  await prefixIsolation(t, app.sb.store);
  await setIfAbsent(t, app.sb.store);
  await increment(t, app.sb.store);
  await setMany(t, app.sb.store);
});

t.test('Redis increment: atomic across two clients and two processes, and keyv reads it', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const a = await openStore({ backend: 'redis', url: redis.url });
  const b = await openStore({ backend: 'redis', url: redis.url });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  await incrementAcross(t, a, b);
  const total = await incrementAcrossProcesses(t, ['redis', redis.url]);
  t.equal(await b.collection('counters-processes').get('gen'), total, 'get() on another client reads the last value');
});

t.test('config store.url wins over REDIS_URL', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const app = await buildApp({
    env: { REDIS_URL: 'redis://127.0.0.1:1', DATA_DIR: tempDir() },
    config: { store: { url: redis.url } },
    logLevel: 'silent',
    discovery: { builtinRoot: noopOnlyRoot() },
  });
  t.teardown(() => app.close());
  t.equal(app.sb.store.backend, 'redis');
  await app.sb.store.collection('x').set('k', { ok: true });
  t.same(await app.sb.store.collection('x').get('k'), { ok: true });
});

t.test('a Redis outage is a 503 naming the store, never a miss', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const store = await openStore({ backend: 'redis', url: redis.url });
  const app = await buildApp({
    env: { DATA_DIR: tempDir() },
    config: {},
    store,
    logLevel: 'silent',
    beforeSurfaces: routes,
    discovery: { builtinRoot: noopOnlyRoot() },
  });
  t.teardown(async () => {
    await app.close();
    await store.close();
  });
  await app.ready();
  await store.collection('notes').set('n1', { text: 'hello' });
  t.equal((await app.inject({ url: '/test/notes/n1' })).statusCode, 200, 'reads while Redis is up');
  t.equal((await app.inject({ url: '/test/notes/none' })).statusCode, 404, 'a real miss is a miss');

  redis.stop();
  await waitExit(redis.child);

  for (const [op, call] of [
    ['get', () => store.collection('notes').get('n1')],
    ['getMany', () => store.collection('notes').getMany(['n1'])],
    ['set', () => store.collection('notes').set('n2', { text: 'x' })],
    ['delete', () => store.collection('notes').delete('n1')],
    ['clear', () => store.collection('notes').clear()],
    [
      'entries',
      async () => {
        for await (const _ of store.collection('notes').entries()) void _;
      },
    ],
  ] as Array<[string, () => Promise<unknown>]>) {
    let err: unknown;
    try {
      await call();
    } catch (e) {
      err = e;
    }
    t.ok(isSwitchboardError(err), `${op}: throws a coded error instead of answering`);
    if (isSwitchboardError(err)) {
      t.equal(err.statusCode, 503, `${op}: 503`);
      t.equal(err.code, 'SB_ERR_STORE_UNAVAILABLE', `${op}: code`);
      t.match(err.detail, /Store 'redis' is unavailable/, `${op}: names the store`);
    }
  }

  const res = await app.inject({ url: '/test/notes/n1' });
  t.equal(res.statusCode, 503, 'an HTTP route that reads the store answers 503');
  t.same(Object.keys(res.json()).sort(), ['code', 'detail']);
  t.equal(res.json().code, 'SB_ERR_STORE_UNAVAILABLE');
  t.match(res.json().detail, /redis/);

  const agents = await app.inject({ url: '/api/v1/agents' });
  t.equal(agents.statusCode, 503, 'a real store-backed route (agents list) answers 503 too, not an empty list');
  t.equal(agents.json().code, 'SB_ERR_STORE_UNAVAILABLE');

  const ready = await app.inject({ url: '/readyz' });
  t.equal(ready.statusCode, 503);
  t.equal(ready.json().checks['store/redis'], 'down');
});

t.test('starting while Redis is down fails with a coded error, not a hang', async (t) => {
  const redis = await startRedis();
  redis.stop();
  await waitExit(redis.child);
  await t.rejects(openStore({ backend: 'redis', url: redis.url }), {
    code: 'SB_ERR_STORE_UNAVAILABLE',
    message: /Store 'redis' at redis:\/\/127\.0\.0\.1:\d+/,
  });
});

/** Settles with the call's outcome, or fails the test when it has not settled after `ms` (a hang is the bug). */
async function answered<T>(
  t: { fail(msg: string): void },
  what: string,
  call: () => Promise<T>,
  ms = 15_000,
): Promise<{ value?: T; err?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<'hang'>((r) => (timer = setTimeout(() => r('hang'), ms)));
  const outcome = await Promise.race([
    call().then(
      (value) => ({ value }),
      (err: unknown) => ({ err }),
    ),
    hang,
  ]).finally(() => clearTimeout(timer));
  if (outcome === 'hang') {
    t.fail(`${what}: no answer within ${ms} ms`);
    return {};
  }
  return outcome;
}

t.test(
  'a frozen Redis (SIGSTOP): every store call is a 503 within store.command_timeout_ms, and it recovers on SIGCONT',
  async (t) => {
    const redis = await startRedis();
    t.teardown(() => {
      redis.thaw();
      redis.stop();
    });
    const app = await buildApp({
      env: { DATA_DIR: tempDir() },
      config: { store: { url: redis.url, command_timeout_ms: 1000 } },
      logLevel: 'silent',
      beforeSurfaces: routes,
      discovery: { builtinRoot: noopOnlyRoot() },
    });
    t.teardown(() => app.close());
    await app.ready();
    const store = app.sb.store;
    await store.collection('notes').set('n1', { text: 'hello' });
    t.equal((await app.inject({ url: '/test/notes/n1' })).statusCode, 200, 'reads while Redis answers');

    redis.freeze();
    for (const [op, call] of [
      ['get', () => store.collection('notes').get('n1')],
      ['getMany', () => store.collection('notes').getMany(['n1'])],
      ['set', () => store.collection('notes').set('n2', { text: 'x' })],
      ['delete', () => store.collection('notes').delete('n2')],
      ['clear', () => store.collection('frozen-clear').clear()],
      [
        'entries',
        async () => {
          for await (const _ of store.collection('notes').entries()) void _;
        },
      ],
    ] as Array<[string, () => Promise<unknown>]>) {
      const { err } = await answered(t, op, call);
      t.ok(isSwitchboardError(err), `${op}: a coded error, not a hang or an answer`);
      if (isSwitchboardError(err)) {
        t.equal(err.statusCode, 503, `${op}: 503`);
        t.equal(err.code, 'SB_ERR_STORE_UNAVAILABLE', `${op}: code`);
        t.match(
          err.detail,
          /Store 'redis' is unavailable .*no answer within 1000 ms/,
          `${op}: names the store and the deadline`,
        );
      }
    }
    t.equal((await answered(t, 'healthcheck', () => store.healthcheck())).value, 'down', 'the store health says down');

    const res = (await answered(t, 'HTTP read', () => app.inject({ url: '/test/notes/n1' }))).value;
    t.equal(res?.statusCode, 503, 'an HTTP route that reads the store answers 503');
    t.same(Object.keys(res?.json() ?? {}).sort(), ['code', 'detail']);
    const agents = (await answered(t, 'agents list', () => app.inject({ url: '/api/v1/agents' }))).value;
    t.equal(agents?.statusCode, 503, 'a real store-backed route (agents list) too');
    t.equal(agents?.json().code, 'SB_ERR_STORE_UNAVAILABLE');
    const ready = (await answered(t, '/readyz', () => app.inject({ url: '/readyz' }))).value;
    t.equal(ready?.statusCode, 503, '/readyz answers, 503');
    t.equal(ready?.json().checks['store/redis'], 'down');

    redis.thaw();
    t.same(
      await store.collection('notes').get('n1'),
      { text: 'hello' },
      'answers again after SIGCONT, on the same connection',
    );
    t.equal((await app.inject({ url: '/readyz' })).json().checks['store/redis'], 'ok');
  },
);

t.test('store.command_timeout_ms is validated', async (t) => {
  await t.rejects(
    buildApp({
      env: { DATA_DIR: tempDir() },
      config: { store: { backend: 'memory', command_timeout_ms: 0 } },
      logLevel: 'silent',
      discovery: { builtinRoot: noopOnlyRoot() },
    }),
    { code: 'SB_ERR_CONFIG_INVALID', message: /store\.command_timeout_ms/ },
  );
});
