import t from 'tap';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { notImplemented, unavailable } from '../../core/errors.ts';
import { makeApp } from '../helpers/app.ts';

const Item = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    count: Type.Integer({ minimum: 0 }),
    tags: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
);

/** Test-only routes with request schemas, registered before the app is ready. */
async function routes(app: FastifyInstance) {
  app.post(
    '/test/items',
    {
      schema: {
        body: Item,
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })) }),
        response: { 201: Item },
      },
    },
    async (request, reply) => reply.status(201).send(request.body),
  );
  app.get('/test/fail/:kind', async (request) => {
    const { kind } = request.params as { kind: string };
    if (kind === '501')
      throw notImplemented('SB_ERR_TEST_CAPABILITY', "The memory provider 'x' does not support search");
    if (kind === '503')
      throw unavailable('SB_ERR_STORE_UNAVAILABLE', "Store 'redis' is unavailable (get): connection refused");
    throw new Error('secret internals: password=hunter2');
  });
}

const BIG = JSON.stringify({ name: 'x'.repeat(4096), count: 1 });

t.test('every error is JSON {detail, code}', async (t) => {
  const app = await makeApp(t, { body_limit_bytes: 2048 }, { beforeSurfaces: routes });
  const cases: Array<[string, InjectOptions, number, string]> = [
    ['unknown route', { method: 'GET', url: '/no/such/route' }, 404, 'SB_ERR_ROUTE_NOT_FOUND'],
    ['unknown route under /api/v1', { method: 'GET', url: '/api/v1/nothing-here' }, 404, 'SB_ERR_ROUTE_NOT_FOUND'],
    // Outside /api/v1 (the registry's rule, spec section 7): JSON that does not parse is a 422.
    [
      'malformed JSON',
      {
        method: 'POST',
        url: '/test/items',
        headers: { 'content-type': 'application/json' },
        payload: '{"name": "a", ',
      },
      422,
      'SB_ERR_MALFORMED_JSON',
    ],
    [
      'empty JSON body',
      { method: 'POST', url: '/test/items', headers: { 'content-type': 'application/json' }, payload: '' },
      422,
      'SB_ERR_MALFORMED_JSON',
    ],
    [
      'malformed JSON on the platform',
      {
        method: 'POST',
        url: '/api/v1/memory/ns',
        headers: { 'content-type': 'application/json' },
        payload: '{"name": "a", ',
      },
      400,
      'SB_ERR_MALFORMED_JSON',
    ],
    [
      'oversized body',
      { method: 'POST', url: '/test/items', headers: { 'content-type': 'application/json' }, payload: BIG },
      413,
      'SB_ERR_BODY_TOO_LARGE',
    ],
    [
      'unsupported media type',
      { method: 'POST', url: '/test/items', headers: { 'content-type': 'application/x-yaml' }, payload: 'name: a' },
      415,
      'SB_ERR_UNSUPPORTED_MEDIA_TYPE',
    ],
    ['schema validation', { method: 'POST', url: '/test/items', payload: { count: -1 } }, 422, 'SB_ERR_VALIDATION'],
    ['capability missing', { method: 'GET', url: '/test/fail/501' }, 501, 'SB_ERR_TEST_CAPABILITY'],
    ['dependency down', { method: 'GET', url: '/test/fail/503' }, 503, 'SB_ERR_STORE_UNAVAILABLE'],
    ['unexpected throw', { method: 'GET', url: '/test/fail/boom' }, 500, 'SB_ERR_INTERNAL'],
  ];
  for (const [name, req, status, code] of cases) {
    const res = await app.inject(req);
    t.equal(res.statusCode, status, `${name}: ${status}`);
    t.match(res.headers['content-type'], /^application\/json/, `${name}: JSON`);
    const body = res.json();
    t.same(Object.keys(body).sort(), ['code', 'detail'], `${name}: exactly {detail, code}`);
    t.equal(body.code, code, `${name}: code`);
    t.ok(
      typeof body.detail === 'string' ? body.detail.length > 0 : Array.isArray(body.detail),
      `${name}: detail present`,
    );
  }
});

t.test('422 lists every failing field as {loc, msg, type}', async (t) => {
  const app = await makeApp(t, {}, { beforeSurfaces: routes });
  const res = await app.inject({
    method: 'POST',
    url: '/test/items',
    payload: { count: -1, tags: ['ok', { not: 'a string' }], extra: true },
  });
  t.equal(res.statusCode, 422);
  const detail = res.json().detail as Array<{ loc: Array<string | number>; msg: string; type: string }>;
  const locs = detail.map((d) => d.loc.join('.'));
  t.ok(locs.includes('body.name'), 'missing required field');
  t.ok(locs.includes('body.count'), 'out-of-range field');
  t.ok(locs.includes('body.tags.1'), 'array item, with its index');
  t.ok(locs.includes('body.extra'), 'unknown field');
  for (const d of detail) {
    t.type(d.msg, 'string');
    t.type(d.type, 'string');
  }
  t.equal(detail.find((d) => d.loc.join('.') === 'body.name')?.type, 'required');

  const q = await app.inject({ method: 'POST', url: '/test/items?limit=99', payload: { name: 'a', count: 1 } });
  t.equal(q.statusCode, 422);
  t.same(
    q.json().detail.map((d: { loc: unknown[] }) => d.loc),
    [['query', 'limit']],
    'querystring errors say query',
  );
});

t.test('a valid body passes and the response schema shapes the reply', async (t) => {
  const app = await makeApp(t, {}, { beforeSurfaces: routes });
  const res = await app.inject({ method: 'POST', url: '/test/items', payload: { name: 'a', count: 2, tags: ['x'] } });
  t.equal(res.statusCode, 201);
  t.same(res.json(), { name: 'a', count: 2, tags: ['x'] });
});

t.test('a 500 does not leak the error message', async (t) => {
  const app = await makeApp(t, {}, { beforeSurfaces: routes });
  const res = await app.inject({ method: 'GET', url: '/test/fail/boom' });
  t.equal(res.statusCode, 500);
  t.notMatch(res.body, /hunter2|secret internals/);
});

t.test('the default body limit is 1 MiB and body_limit_bytes changes it', async (t) => {
  const app = await makeApp(t, {}, { beforeSurfaces: routes });
  const ok = await app.inject({
    method: 'POST',
    url: '/test/items',
    headers: { 'content-type': 'application/json' },
    payload: BIG,
  });
  t.equal(ok.statusCode, 201, `a 4 KiB body is fine by default: ${ok.body.slice(0, 200)}`);
  await t.rejects(makeApp(t, { body_limit_bytes: 10 }), { code: 'SB_ERR_CONFIG_INVALID', message: /body_limit_bytes/ });
});

/** A made id: the process's 12-hex-digit random prefix and a base-36 counter (plugins/request-context.ts). */
const MADE_ID = /^[0-9a-f]{12}-[0-9a-z]+$/;

t.test('request ids are echoed, or made when absent, on success and on errors', async (t) => {
  const app = await makeApp(t);
  const given = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
  t.equal(given.headers['x-request-id'], 'abc-123');
  const made = await app.inject({ method: 'GET', url: '/healthz' });
  t.match(made.headers['x-request-id'], MADE_ID);
  t.equal(made.headers['x-correlation-id'], made.headers['x-request-id']);
  const forged = await app.inject({
    method: 'GET',
    url: '/healthz',
    headers: { 'x-request-id': `${'x'.repeat(300)}` },
  });
  t.match(forged.headers['x-request-id'], MADE_ID, 'an oversized id is replaced');
  const spaced = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a b"c' } });
  t.match(spaced.headers['x-request-id'], MADE_ID, 'an id with odd characters is replaced');
  const other = await app.inject({ method: 'GET', url: '/healthz' });
  t.not(other.headers['x-request-id'], made.headers['x-request-id'], 'a new id per request');
  const otherApp = await makeApp(t);
  const elsewhere = await otherApp.inject({ method: 'GET', url: '/healthz' });
  t.not(
    String(elsewhere.headers['x-request-id']).split('-')[0],
    String(made.headers['x-request-id']).split('-')[0],
    'another process (or app) has another prefix',
  );
  const corr = await app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-correlation-id': 'corr-9' } });
  t.equal(corr.statusCode, 404);
  t.equal(corr.headers['x-correlation-id'], 'corr-9');
  t.match(corr.headers['x-request-id'], MADE_ID);
});
