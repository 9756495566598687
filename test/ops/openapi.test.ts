import t from 'tap';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { noopOnlyRoot } from '../fixtures/roots.ts';

/** Only the built-in noop package, so these tests do not depend on other providers being finished. */
const ROOT = noopOnlyRoot();

async function routes(app: FastifyInstance) {
  app.post(
    '/test/widgets/:id',
    {
      schema: {
        tags: ['test'],
        summary: 'Make a widget',
        params: Type.Object({ id: Type.String({ pattern: '^[a-z]+$' }) }),
        body: Type.Object({ size: Type.Integer({ minimum: 1 }), label: Type.Optional(Type.String()) }),
        response: { 201: Type.Object({ id: Type.String(), size: Type.Integer() }) },
      },
    },
    async (request, reply) => reply.status(201).send({ id: (request.params as { id: string }).id, size: (request.body as { size: number }).size }),
  );
}

t.test('/openapi.json is generated from the route schemas', async (t) => {
  const app = await makeApp(t, {}, { beforeSurfaces: routes, discovery: { builtinRoot: ROOT } });
  const res = await app.inject({ url: '/openapi.json' });
  t.equal(res.statusCode, 200);
  const doc = res.json();
  t.match(doc.openapi, /^3\./);
  t.equal(doc.info.title, 'Switchboard');

  const op = doc.paths['/test/widgets/{id}']?.post;
  t.ok(op, 'the test route is listed with an OpenAPI path template');
  t.same(op.tags, ['test']);
  t.equal(op.summary, 'Make a widget');
  t.same(op.requestBody.content['application/json'].schema.required, ['size']);
  t.equal(op.requestBody.content['application/json'].schema.properties.size.minimum, 1);
  t.same(op.parameters.map((p: { name: string; in: string }) => [p.in, p.name]), [['path', 'id']]);
  t.equal(op.responses['201'].content['application/json'].schema.properties.size.type, 'integer');

  t.ok(doc.paths['/healthz']?.get?.responses?.['200'], 'ops routes too');
  t.ok(doc.paths['/readyz']?.get?.responses?.['503'], '/readyz documents its 503');
  t.ok(doc.paths['/api/v1/providers']?.get, 'platform routes');
  t.notOk(doc.paths['/openapi.json'], 'the document itself is hidden');
});

t.test('every documented operation carries a response schema and a tag', async (t) => {
  const app = await makeApp(t, {}, { discovery: { builtinRoot: ROOT } });
  const doc = (await app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { tags?: string[]; responses?: Record<string, unknown> }>> };
  const count = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
  t.ok(count > 20, `documents the surfaces (${count} operations)`);
  const untagged = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => !op.tags?.length)
      .map(([m]) => `${m.toUpperCase()} ${path}`),
  );
  t.comment(untagged.length ? `untagged operations: ${untagged.join(', ')}` : 'every operation is tagged');
  t.ok(doc.paths['/healthz'].get.tags?.includes('ops'));
});

t.test('/docs serves the interactive UI', async (t) => {
  const app = await makeApp(t, {}, { discovery: { builtinRoot: ROOT } });
  const res = await app.inject({ url: '/docs' });
  const page = res.statusCode === 302 ? await app.inject({ url: res.headers.location as string }) : res;
  const html = page.statusCode === 200 ? page : await app.inject({ url: '/docs/' });
  t.equal(html.statusCode, 200);
  t.match(html.headers['content-type'], /text\/html/);
  t.match(html.body, /swagger/i);
  const init = await app.inject({ url: '/docs/json' });
  t.equal(init.statusCode, 200, 'the UI reads the same generated document');
  t.ok(init.json().paths['/healthz']);
});
