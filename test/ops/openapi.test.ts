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
    async (request, reply) =>
      reply
        .status(201)
        .send({ id: (request.params as { id: string }).id, size: (request.body as { size: number }).size }),
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
  t.same(
    op.parameters.map((p: { name: string; in: string }) => [p.in, p.name]),
    [['path', 'id']],
  );
  t.equal(op.responses['201'].content['application/json'].schema.properties.size.type, 'integer');

  t.ok(doc.paths['/healthz']?.get?.responses?.['200'], 'ops routes too');
  t.ok(doc.paths['/readyz']?.get?.responses?.['503'], '/readyz documents its 503');
  t.ok(doc.paths['/api/v1/providers']?.get, 'platform routes');
  t.notOk(doc.paths['/openapi.json'], 'the document itself is hidden');
});

t.test('every documented operation carries a response schema and a tag', async (t) => {
  const app = await makeApp(t, {}, { discovery: { builtinRoot: ROOT } });
  const doc = (await app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, { tags?: string[]; responses?: Record<string, unknown> }>>;
  };
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

type Op = {
  operationId?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ in: string; name: string }>;
  responses: Record<string, { $ref?: string; content?: Record<string, { schema?: { $ref?: string } }> }>;
};

t.test('security, operationIds, tags and error responses are derived for every operation', async (t) => {
  const app = await makeApp(t, {}, { discovery: { builtinRoot: ROOT } });
  const doc = (await app.inject({ url: '/openapi.json' })).json() as {
    tags: Array<{ name: string; description?: string }>;
    paths: Record<string, Record<string, Op>>;
    components: {
      securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }>;
      responses: Record<string, unknown>;
      schemas: Record<string, unknown>;
    };
  };
  const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
  const schemes = doc.components.securitySchemes;
  t.match(schemes.bearer, { type: 'http', scheme: 'bearer' });
  t.match(schemes.basic, { type: 'http', scheme: 'basic' });
  t.match(schemes.session, { type: 'apiKey', in: 'cookie', name: 'mcp_gateway_session' });
  t.match(schemes.apiKey, { type: 'apiKey', in: 'header', name: 'X-Api-Key' });
  t.match(schemes.xAuthorization, { type: 'apiKey', in: 'header', name: 'X-Authorization' });

  const names = (path: string, method = 'get') =>
    doc.paths[path][method].security?.map((s) => Object.keys(s).join('+'));
  t.same(names('/api/servers/register', 'post'), ['bearer', 'basic', 'session'], 'registry: bearer, basic, cookie');
  t.same(
    names('/api/v1/memory/{namespace}', 'post'),
    ['bearer', 'apiKey', 'session'],
    'platform: bearer, X-Api-Key, or the registry session cookie (session-principal.ts)',
  );
  const platformOps = ops.filter(({ path, op }) => path.startsWith('/api/v1/') && (op.security?.length ?? 0) > 0);
  t.ok(platformOps.length > 0, 'the platform surface is in the document');
  t.same(
    platformOps.filter(({ op }) => !op.security?.some((s) => 'session' in s)).map(({ path }) => path),
    [],
    'every authenticated /api/v1 operation lists the session cookie',
  );
  t.same(names('/validate'), ['xAuthorization', 'bearer', 'session'], '/validate: X-Authorization, bearer, cookie');
  for (const open of [
    '/healthz',
    '/readyz',
    '/auth/config',
    '/.well-known/mcp-servers',
    '/api/v1/browser/live/{session_id}',
  ]) {
    t.same(doc.paths[open].get.security, [], `${open} is public`);
  }
  t.notOk(
    ops.some(({ op }) => op.security === undefined),
    'every operation states its security',
  );

  const ids = ops.map(({ op }) => op.operationId);
  t.notOk(
    ids.some((id) => !id),
    'every operation has an operationId',
  );
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  t.equal(
    doc.paths['/api/v1/memory/{namespace}'].post.operationId,
    'postApiV1MemoryByNamespace',
    'derived from method and path',
  );

  const described = new Map(doc.tags.map((tag) => [tag.name, tag.description]));
  const undeclared = ops.flatMap(({ op }) => op.tags ?? []).filter((tag) => !described.get(tag));
  t.same([...new Set(undeclared)], [], 'every tag used is in the top-level list with a description');
  t.notOk(
    doc.tags.some((tag) => tag.description?.startsWith('Operations of ')),
    'every tag has a written description (add new tags to plugins/ops/openapi-tags.ts)',
  );

  const isError = (r: Op['responses'][string]) => {
    const schema = r.content?.['application/json']?.schema as
      | { $ref?: string; anyOf?: Array<{ $ref?: string }> }
      | undefined;
    return (
      r.$ref?.startsWith('#/components/responses/') ||
      schema?.$ref === '#/components/schemas/Error' ||
      schema?.anyOf?.some((m) => m.$ref === '#/components/schemas/Error')
    );
  };
  const notJsonError = ops.flatMap(({ path, method, op }) =>
    Object.entries(op.responses)
      .filter(([status, r]) => Number(status) >= 400 && !isError(r) && r.content?.['application/json'])
      .map(([status]) => `${method} ${path} ${status}`),
  );
  t.comment(
    notJsonError.length
      ? `error responses with their own body: ${notJsonError.join(', ')}`
      : 'every JSON error response is {detail, code}',
  );
  t.same(
    notJsonError.sort(),
    ['get /health 503', 'get /readyz 503'],
    'error responses use the {detail, code} schema (the health documents answer 503 with their own status body)',
  );
  t.match(doc.components.schemas.Error, { required: ['detail', 'code'] });
  const register = doc.paths['/api/servers/register'].post.responses;
  t.ok(register['401'] && register['422'] && register['500'], 'an operation taking input lists 401, 422 and 500');

  const headers = (doc.paths['/api/v1/memory/{namespace}'].post.parameters ?? [])
    .filter((p) => p.in === 'header')
    .map((p) => p.name);
  t.same(
    headers,
    ['X-Provider', 'X-Provider-Memory', 'X-Cred-{Service}-{Key}'],
    'platform routing and credential headers',
  );
  const agentHeaders = (doc.paths['/api/v1/agents/{name}/chat'].post.parameters ?? []).map((p) => p.name);
  t.ok(
    agentHeaders.includes('X-Provider-Code-Interpreter') && agentHeaders.includes('X-Provider-Llm'),
    'agents route every primitive',
  );
  t.notOk(
    doc.paths['/api/servers/register'].post.parameters?.some((p) => p.name.startsWith('X-Provider')),
    'not on registry routes',
  );

  // redocly.yaml turns no-path-trailing-slash off for this one path only.
  t.same(
    Object.keys(doc.paths).filter((p) => p.length > 1 && p.endsWith('/')),
    ['/api/'],
    'only the registry dashboard ends in /',
  );
});

t.test('the docs page sends the CSRF token from the cookie on unsafe calls only', async (t) => {
  const { docsRequestInterceptor } = await import('../../plugins/ops/docs-interceptor.ts');
  const g = globalThis as { document?: { cookie: string } };
  const before = g.document;
  t.teardown(() => {
    g.document = before;
  });
  g.document = { cookie: 'other=1; mcp_gateway_csrf=abc%3D%3D; x=2' };
  const post = docsRequestInterceptor({
    method: 'POST',
    headers: { 'X-Cred-{Service}-{Key}': 'v', accept: 'application/json' },
  }) as { headers: Record<string, string> };
  t.same(
    post.headers,
    { accept: 'application/json', 'X-CSRF-Token': 'abc==' },
    'token decoded; the pattern header dropped',
  );
  const own = docsRequestInterceptor({ method: 'DELETE', headers: { 'x-csrf-token': 'mine' } }) as {
    headers: Record<string, string>;
  };
  t.same(own.headers, { 'x-csrf-token': 'mine' }, 'a token the caller set is kept');
  const get = docsRequestInterceptor({ method: 'GET', headers: {} }) as { headers: Record<string, string> };
  t.same(get.headers, {}, 'safe methods go without it');
  g.document = { cookie: '' };
  t.same(
    (docsRequestInterceptor({ method: 'POST', headers: {} }) as { headers: Record<string, string> }).headers,
    {},
    'no cookie, no header',
  );

  const app = await makeApp(t, {}, { discovery: { builtinRoot: ROOT } });
  const init = await app.inject({ url: '/docs/static/swagger-initializer.js' });
  t.match(init.body, /"requestInterceptor":function anonymous\(req/, 'the page is configured with it');
  t.match(init.body, /mcp_gateway_csrf/);
});
