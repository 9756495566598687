import t from 'tap';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { unavailable } from '../../core/errors.ts';
import { buildApp } from '../../plugins/app.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { noopOnlyRoot } from '../fixtures/roots.ts';
import { startRedis, waitExit } from '../fixtures/redis-server.ts';

/**
 * An error is always sent as {detail, code}, even on a route whose response
 * schema documents a body of its own for the same status (GET /health and
 * /readyz document their 503). Fastify serialises error-handler replies with
 * the route's schema for that status, so a store error thrown on such a route
 * used to fail serialisation and become a 500 FST_ERR_FAILED_ERROR_SERIALIZATION.
 */

t.test('a coded error on a route with its own 503 schema is a 503 {detail, code}', async (t) => {
  const app = await makeApp(
    t,
    {},
    {
      discovery: { builtinRoot: noopOnlyRoot() },
      beforeSurfaces: (app: FastifyInstance) => {
        app.get(
          '/test/own-503',
          {
            schema: {
              response: {
                200: Type.Object({ status: Type.String() }),
                503: Type.Object({ status: Type.String(), checks: Type.Record(Type.String(), Type.String()) }),
              },
            },
          },
          async () => {
            throw unavailable('SB_ERR_STORE_UNAVAILABLE', "Store 'redis' is unavailable (get): test");
          },
        );
      },
    },
  );
  const res = await app.inject({ url: '/test/own-503' });
  t.equal(res.statusCode, 503);
  t.match(res.headers['content-type'], /^application\/json/);
  t.same(res.json(), { detail: "Store 'redis' is unavailable (get): test", code: 'SB_ERR_STORE_UNAVAILABLE' });
});

t.test('GET /health and /readyz during a Redis outage: 503 JSON, never a 500', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const app = await buildApp({
    env: { DATA_DIR: tempDir() },
    config: { store: { url: redis.url }, registry: { health: { interval_seconds: 0 } } },
    logLevel: 'silent',
    discovery: { builtinRoot: noopOnlyRoot() },
  });
  t.teardown(() => app.close());
  await app.ready();
  t.equal((await app.inject({ url: '/health' })).statusCode, 200, '/health is 200 while Redis is up');
  redis.stop();
  await waitExit(redis.child);

  const health = await app.inject({ url: '/health' });
  t.equal(health.statusCode, 503, `/health: ${health.body}`);
  const body = health.json();
  t.not(body.code, 'FST_ERR_FAILED_ERROR_SERIALIZATION');
  if ('code' in body) {
    t.same(Object.keys(body).sort(), ['code', 'detail'], 'an error body is {detail, code}');
    t.equal(body.code, 'SB_ERR_STORE_UNAVAILABLE');
  } else {
    t.equal(body.store, 'down', 'or its own body says the store is down');
  }

  const ready = await app.inject({ url: '/readyz' });
  t.equal(ready.statusCode, 503);
  t.equal(ready.json().checks['store/redis'], 'down');
});
