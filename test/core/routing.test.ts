import t from 'tap';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { isPrimitive, PRIMITIVES } from '../../core/primitives.ts';
import { makeApp } from '../helpers/app.ts';
import type { ProbeMemory } from '../fixtures/providers/probe/index.ts';

const PROBE = fileURLToPath(new URL('../fixtures/providers/probe', import.meta.url));

const CONFIG = {
  provider_packages: [PROBE],
  providers: {
    memory: { default: 'a', instances: { a: { type: 'probe' }, b: { type: 'probe' } } },
    tools: { default: 't1', locked: true, instances: { t1: { type: 'probe_tools' }, t2: { type: 'probe_tools' } } },
  },
};

/** Test-only routes: which instance a request routes to, and a store/retrieve through it. */
async function routes(app: FastifyInstance) {
  app.get(
    '/test/route/:primitive',
    {
      schema: {
        params: Type.Object({ primitive: Type.String() }),
        querystring: Type.Object({ override: Type.Optional(Type.String()) }),
      },
    },
    async (request) => {
      const { primitive } = request.params as { primitive: string };
      if (!isPrimitive(primitive)) throw new Error('not a primitive');
      return {
        name: app.sb.providers.resolve(primitive, request.headers, (request.query as { override?: string }).override)
          .name,
      };
    },
  );
  app.put('/test/mem/:ns/:key', async (request) => {
    const { ns, key } = request.params as { ns: string; key: string };
    return app.sb.providers
      .resolve<ProbeMemory>('memory', request.headers)
      .store(ns, { key, content: String(request.body) });
  });
  app.get('/test/mem/:ns/:key', async (request, reply) => {
    const { ns, key } = request.params as { ns: string; key: string };
    const rec = await app.sb.providers.resolve<ProbeMemory>('memory', request.headers).retrieve(ns, key);
    return rec ?? reply.status(404).send({ detail: 'no such record', code: 'SB_ERR_TEST_MISSING' });
  });
}

t.test('routing precedence: X-Provider-{Primitive} > X-Provider > agent override > config default', async (t) => {
  const app = await makeApp(t, CONFIG, { beforeSurfaces: routes });
  const which = async (headers: Record<string, string>, override?: string) => {
    const res = await app.inject({ url: `/test/route/memory${override ? `?override=${override}` : ''}`, headers });
    t.equal(res.statusCode, 200, res.body);
    return res.json().name;
  };
  t.equal(await which({}), 'a', 'config default');
  t.equal(await which({}, 'b'), 'b', 'agent override beats the default');
  t.equal(await which({ 'x-provider': 'b' }), 'b', 'X-Provider beats the default');
  t.equal(await which({ 'x-provider': 'a' }, 'b'), 'a', 'X-Provider beats the agent override');
  t.equal(await which({ 'x-provider-memory': 'b', 'x-provider': 'a' }), 'b', 'X-Provider-Memory beats X-Provider');
  t.equal(await which({ 'x-provider-memory': 'a' }, 'b'), 'a', 'X-Provider-Memory beats the agent override');
  t.equal(await which({ 'X-Provider-Memory': 'b' }), 'b', 'header names are case-insensitive');
  t.equal(
    await which({ 'x-provider': 'openai' }),
    'a',
    'X-Provider naming no memory instance leaves memory on its default',
  );
});

t.test('an unknown provider name is a 400 that lists the available ones', async (t) => {
  const app = await makeApp(t, CONFIG, { beforeSurfaces: routes });
  const res = await app.inject({ url: '/test/route/memory', headers: { 'x-provider-memory': 'x' } });
  t.equal(res.statusCode, 400);
  t.same(res.json(), { detail: "Unknown memory provider 'x'. Available: a, b", code: 'SB_ERR_PROVIDER_UNKNOWN' });

  const agent = await app.inject({ url: '/test/route/memory?override=ghost' });
  t.equal(agent.statusCode, 400);
  t.equal(agent.json().detail, "Unknown memory provider 'ghost'. Available: a, b");

  const ci = await app.inject({
    url: '/test/route/code_interpreter',
    headers: { 'x-provider-code-interpreter': 'nope' },
  });
  t.equal(ci.statusCode, 400, 'X-Provider-Code-Interpreter is the header of code_interpreter');
  t.match(ci.json().detail, /^Unknown code interpreter provider 'nope'\. Available: /);
});

t.test('a locked primitive refuses overrides with a 403 that says so', async (t) => {
  const app = await makeApp(t, CONFIG, { beforeSurfaces: routes });
  const header = await app.inject({ url: '/test/route/tools', headers: { 'x-provider-tools': 't2' } });
  t.equal(header.statusCode, 403);
  t.equal(header.json().code, 'SB_ERR_PROVIDER_LOCKED');
  t.match(header.json().detail, /locked to 't1'/);
  t.match(header.json().detail, /X-Provider-Tools asking for 't2' is refused/);

  const general = await app.inject({ url: '/test/route/tools', headers: { 'x-provider': 't2' } });
  t.equal(general.statusCode, 403, 'X-Provider is refused too, not silently dropped');
  t.match(general.json().detail, /X-Provider asking for 't2'/);

  const agent = await app.inject({ url: '/test/route/tools?override=t2' });
  t.equal(agent.statusCode, 403, 'an agent override is refused');
  t.match(agent.json().detail, /agent provider_overrides asking for 't2'/);

  const same = await app.inject({ url: '/test/route/tools', headers: { 'x-provider-tools': 't1' } });
  t.equal(same.statusCode, 200, 'naming the locked default is allowed');
  t.equal(same.json().name, 't1');

  const unlocked = await app.inject({ url: '/test/route/memory', headers: { 'x-provider-memory': 'b' } });
  t.equal(unlocked.json().name, 'b', 'the lock is per primitive');
});

t.test('several named instances of one provider type keep separate state', async (t) => {
  const app = await makeApp(t, CONFIG, { beforeSurfaces: routes });
  const put = await app.inject({
    method: 'PUT',
    url: '/test/mem/ns/k',
    headers: { 'x-provider-memory': 'b', 'content-type': 'text/plain' },
    payload: 'in b',
  });
  t.equal(put.statusCode, 200, put.body);
  const fromB = await app.inject({ url: '/test/mem/ns/k', headers: { 'x-provider-memory': 'b' } });
  t.equal(fromB.json().content, 'in b');
  const fromA = await app.inject({ url: '/test/mem/ns/k' });
  t.equal(fromA.statusCode, 404, 'instance a (the default) does not see what b stored');
  t.equal(app.sb.providers.get('memory', 'a')?.type, 'probe');
  t.equal(app.sb.providers.get('memory', 'b')?.type, 'probe');
});

t.test('GET /api/v1/providers: {primitive: {default, available}} for every primitive', async (t) => {
  const app = await makeApp(t, CONFIG);
  const res = await app.inject({ url: '/api/v1/providers' });
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.same(Object.keys(body).sort(), [...PRIMITIVES].sort(), 'every primitive, and only primitives (not auth/scanners)');
  t.same(body.memory, { default: 'a', available: ['a', 'b'] });
  t.same(body.tools, { default: 't1', available: ['t1', 't2'] });
  for (const [p, v] of Object.entries(body) as Array<[string, { default: string | null; available: string[] }]>) {
    t.ok(Array.isArray(v.available), `${p}.available is a list`);
    if (v.default !== null) t.ok(v.available.includes(v.default), `${p}: the default is one of the available`);
  }
});

t.test('config mistakes in providers name the key', async (t) => {
  await t.rejects(
    makeApp(t, {
      provider_packages: [PROBE],
      providers: { memory: { default: 'zzz', instances: { a: { type: 'probe' } } } },
    }),
    {
      code: 'SB_ERR_CONFIG_INVALID',
      message: /providers\.memory\.default': 'zzz' is not one of a/,
    },
  );
  await t.rejects(makeApp(t, { providers: { memory: { instances: { a: { type: 'nosuch' } } } } }), {
    code: 'SB_ERR_CONFIG_INVALID',
    message: /providers\.memory\.instances\.a\.type': no memory provider of type 'nosuch'/,
  });
  await t.rejects(
    makeApp(t, {
      provider_packages: [PROBE],
      providers: { memory: { instances: { a: { type: 'probe', options: { health: 'sideways' } } } } },
    }),
    {
      code: 'SB_ERR_PROVIDER_INIT_FAILED',
      message: /Provider 'memory\/a' \(package 'sb-fixture-probe'\) failed to start: option 'health'/,
    },
  );
});
