import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { noopOnlyRoot, PROBE } from '../fixtures/roots.ts';
import type { ProbeMemory } from '../fixtures/providers/probe/index.ts';

/** Only the built-in noop package, so these tests do not depend on other providers being finished. */
const ROOT = noopOnlyRoot();

const CONFIG = {
  provider_packages: [PROBE],
  providers: {
    memory: { default: 'a', instances: { a: { type: 'probe' }, b: { type: 'probe', options: { fail: true } } } },
  },
};

async function routes(app: FastifyInstance) {
  app.get('/test/mem/:ns/:key', async (request) => {
    const { ns, key } = request.params as { ns: string; key: string };
    const rec = await app.sb.providers.resolve<ProbeMemory>('memory', request.headers).retrieve(ns, key);
    return { found: rec !== undefined };
  });
}

/** The value of one sample line, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (Object.keys(labels).length === 0 && line.startsWith(`${name} `)) return Number(line.slice(name.length + 1));
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.lastIndexOf('}'));
    const got = Object.fromEntries([...inner.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (
      Object.keys(labels).length === Object.keys(got).length &&
      Object.entries(labels).every(([k, v]) => got[k] === v)
    ) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

t.test('/metrics: requests by route pattern and status, latency histogram, provider calls by outcome', async (t) => {
  const app = await makeApp(t, CONFIG, { beforeSurfaces: routes, discovery: { builtinRoot: ROOT } });
  await app.inject({ url: '/healthz' });
  await app.inject({ url: '/healthz' });
  await app.inject({ url: '/test/mem/ns/k1' });
  await app.inject({ url: '/test/mem/other/k2' });
  const failed = await app.inject({ url: '/test/mem/ns/k3', headers: { 'x-provider-memory': 'b' } });
  t.equal(failed.statusCode, 500);
  await app.inject({ url: '/no/such/thing/42' });
  await app.inject({ method: 'HEAD', url: '/healthz' });
  await app.inject({ method: 'POST', url: '/api/v1/nowhere', payload: {} });

  const res = await app.inject({ url: '/metrics' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const text = res.body;
  t.match(text, /# TYPE switchboard_http_requests_total counter/);
  t.match(text, /# TYPE switchboard_http_request_duration_seconds histogram/);

  t.equal(sample(text, 'switchboard_http_requests_total', { method: 'GET', route: '/healthz', status: '200' }), 2);
  t.equal(
    sample(text, 'switchboard_http_requests_total', { method: 'GET', route: '/test/mem/:ns/:key', status: '200' }),
    2,
    'labelled by pattern',
  );
  t.equal(
    sample(text, 'switchboard_http_requests_total', { method: 'GET', route: '/test/mem/:ns/:key', status: '500' }),
    1,
    'and by status',
  );
  t.equal(
    sample(text, 'switchboard_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' }),
    1,
    'unknown URLs share one label',
  );
  t.equal(
    sample(text, 'switchboard_http_requests_total', { method: 'POST', route: '(unmatched)', status: '404' }),
    1,
    'by method, inside a surface too',
  );
  t.equal(
    sample(text, 'switchboard_http_requests_total', { method: 'HEAD', route: '/healthz', status: '200' }),
    1,
    'a HEAD route is counted once, under its own method',
  );
  t.notMatch(text, /\/test\/mem\/ns\/k1|\/no\/such\/thing|nowhere/, 'no raw URL becomes a label');

  t.equal(
    sample(text, 'switchboard_http_request_duration_seconds_count', {
      method: 'GET',
      route: '/healthz',
      status: '200',
    }),
    2,
  );
  t.equal(
    sample(text, 'switchboard_http_request_duration_seconds_bucket', {
      method: 'GET',
      route: '/healthz',
      status: '200',
      le: '+Inf',
    }),
    2,
  );
  t.ok(
    (sample(text, 'switchboard_http_request_duration_seconds_sum', {
      method: 'GET',
      route: '/healthz',
      status: '200',
    }) ?? -1) >= 0,
  );

  t.equal(
    sample(text, 'switchboard_provider_calls_total', {
      primitive: 'memory',
      provider: 'a',
      method: 'retrieve',
      outcome: 'ok',
    }),
    2,
  );
  t.equal(
    sample(text, 'switchboard_provider_calls_total', {
      primitive: 'memory',
      provider: 'b',
      method: 'retrieve',
      outcome: 'error',
    }),
    1,
  );
  t.equal(
    sample(text, 'switchboard_provider_call_duration_seconds_count', {
      primitive: 'memory',
      provider: 'a',
      outcome: 'ok',
    }),
    2,
  );
  t.ok((sample(text, 'switchboard_process_resident_memory_bytes', {}) ?? 0) > 0, 'process RSS');
  t.equal(sample(text, 'switchboard_providers', { primitive: 'memory' }), 2, 'two memory instances');
});

t.test('each app has its own registry', async (t) => {
  const one = await makeApp(t, CONFIG, { discovery: { builtinRoot: ROOT } });
  const two = await makeApp(t, CONFIG, { discovery: { builtinRoot: ROOT } });
  await one.inject({ url: '/healthz' });
  await one.inject({ url: '/healthz' });
  await two.inject({ url: '/healthz' });
  const a = (await one.inject({ url: '/metrics' })).body;
  const b = (await two.inject({ url: '/metrics' })).body;
  t.equal(sample(a, 'switchboard_http_requests_total', { method: 'GET', route: '/healthz', status: '200' }), 2);
  t.equal(sample(b, 'switchboard_http_requests_total', { method: 'GET', route: '/healthz', status: '200' }), 1);
});
