import t from 'tap';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { compileAllSchemas } from '../../plugins/app.ts';

/**
 * Validators and serialisers compile on a route's first request
 * (plugins/ops/lazy-compilers.ts). These tests check that the deferred ones
 * behave like Fastify's eager ones, and compile every route of the full app
 * once: an invalid schema would otherwise surface only as a 500 on its first
 * request.
 */

async function routes(app: FastifyInstance) {
  app.get(
    '/test/lazy/:n',
    {
      schema: {
        params: Type.Object({ n: Type.Integer({ minimum: 1 }) }),
        querystring: Type.Object({
          tags: Type.Optional(Type.Array(Type.String())),
          limit: Type.Integer({ default: 7 }),
        }),
        headers: Type.Object({ 'X-Lazy-Token': Type.String({ minLength: 3 }) }),
        response: { 200: Type.Object({ n: Type.Integer(), tags: Type.Array(Type.String()), limit: Type.Integer() }) },
      },
    },
    async (request) => {
      const { n } = request.params as { n: number };
      const q = request.query as { tags?: string[]; limit: number };
      // `secret` is not in the response schema: the compiled serialiser must drop it.
      return { n, tags: q.tags ?? [], limit: q.limit, secret: 'must not be sent' };
    },
  );
  app.post(
    '/test/lazy',
    {
      schema: {
        body: Type.Object({ size: Type.Integer({ minimum: 1 }) }),
        response: { 201: Type.Object({ size: Type.Integer() }) },
      },
    },
    async (request, reply) => reply.status(201).send({ size: (request.body as { size: number }).size }),
  );
}

t.test('deferred validators coerce, apply defaults, lower-case header names and report failures', async (t) => {
  const app = await makeApp(t, {}, { beforeSurfaces: routes });
  const ok = await app.inject({ url: '/test/lazy/5?tags=a', headers: { 'x-lazy-token': 'abcd' } });
  t.equal(ok.statusCode, 200, ok.body);
  // Params coerced to an integer, a single query value coerced to an array, the default filled in,
  // and a property outside the response schema removed by the serialiser.
  t.same(ok.json(), { n: 5, tags: ['a'], limit: 7 });
  t.notMatch(ok.body, /must not be sent/);

  const badHeader = await app.inject({ url: '/test/lazy/5', headers: { 'x-lazy-token': 'ab' } });
  t.equal(badHeader.statusCode, 422);
  t.equal(badHeader.json().code, 'SB_ERR_VALIDATION');
  t.same(badHeader.json().detail[0].loc, ['headers', 'x-lazy-token']);

  const missingHeader = await app.inject({ url: '/test/lazy/5' });
  t.equal(missingHeader.statusCode, 422, 'a header schema written in mixed case still requires the lower-cased header');

  const badParam = await app.inject({ url: '/test/lazy/0', headers: { 'x-lazy-token': 'abcd' } });
  t.equal(badParam.statusCode, 422);
  t.same(badParam.json().detail[0].loc, ['params', 'n']);

  // The same validator again after a failure: errors of one call do not leak into the next.
  const again = await app.inject({ url: '/test/lazy/6', headers: { 'x-lazy-token': 'abcd' } });
  t.equal(again.statusCode, 200);

  const body = await app.inject({ method: 'POST', url: '/test/lazy', payload: { size: 0 } });
  t.equal(body.statusCode, 422);
  t.same(body.json().detail[0].loc, ['body', 'size']);
  const created = await app.inject({ method: 'POST', url: '/test/lazy', payload: { size: 2 } });
  t.equal(created.statusCode, 201);
  t.same(created.json(), { size: 2 });
});

t.test('every route schema of the full app compiles', async (t) => {
  const app = await makeApp(t);
  const compiled = compileAllSchemas(app);
  // Both surfaces register well over a hundred routes, most with a params/body/query schema and a response schema.
  t.ok(compiled > 100, `compiled ${compiled} deferred validators and serialisers`);
  t.equal(compileAllSchemas(app), 0, 'nothing is left to compile afterwards');
  const res = await app.inject({ url: '/healthz' });
  t.same(res.json(), { status: 'ok' }, 'routes still answer after a forced compile');
});

t.test('before its first request a route has compiled nothing', async (t) => {
  const app = await makeApp(t, {}, { beforeSurfaces: routes });
  const before = compileAllSchemas(app);
  t.ok(before > 0, 'ready() leaves the compile work pending');
});
