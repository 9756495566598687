import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { noopOnlyRoot, PROBE } from '../fixtures/roots.ts';

function config(healths: Record<string, string>) {
  return {
    provider_packages: [PROBE],
    providers: {
      memory: {
        default: Object.keys(healths)[0],
        instances: Object.fromEntries(
          Object.entries(healths).map(([name, health]) => [name, { type: 'probe', options: { health } }]),
        ),
      },
    },
  };
}

t.test('/healthz answers {status: ok}', async (t) => {
  const app = await makeApp(t);
  const res = await app.inject({ url: '/healthz' });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { status: 'ok' });
});

t.test('/readyz is ok, degraded or error, and 503 only with a down provider', async (t) => {
  const root = noopOnlyRoot();
  const cases: Array<[Record<string, string>, number, string]> = [
    [{ m1: 'ok' }, 200, 'ok'],
    [{ m1: 'ok', m2: 'reachable' }, 200, 'degraded'],
    [{ m1: 'ok', m2: 'reachable', m3: 'down' }, 503, 'error'],
  ];
  for (const [healths, status, word] of cases) {
    const app = await makeApp(t, config(healths), { discovery: { builtinRoot: root } });
    const res = await app.inject({ url: '/readyz' });
    t.equal(res.statusCode, status, `${word}: HTTP status`);
    const body = res.json();
    t.equal(body.status, word, `${word}: status word`);
    for (const [name, h] of Object.entries(healths))
      t.equal(body.checks[`memory/${name}`], h, `${word}: memory/${name} is ${h}`);
    t.equal(body.checks['store/memory'], 'ok', 'the store is checked too');
    t.equal(body.checks['auth/noop'], 'ok', 'every provider is listed as kind/name');
    t.same(Object.keys(body.checks), Object.keys(body.checks).sort(), 'checks come sorted');
  }
});

t.test('a provider whose healthcheck throws counts as down', async (t) => {
  const app = await makeApp(t, config({ m1: 'ok' }), { discovery: { builtinRoot: noopOnlyRoot() } });
  const p = app.sb.providers.get('memory', 'm1')!;
  (p as unknown as { healthcheck: () => Promise<string> }).healthcheck = async () => {
    throw new Error('connection refused');
  };
  const res = await app.inject({ url: '/readyz' });
  t.equal(res.statusCode, 503);
  t.equal(res.json().checks['memory/m1'], 'down');
});

t.test('/api/v1/providers/status lists every provider health and stays 200 with one down', async (t) => {
  const app = await makeApp(t, config({ up: 'ok', half: 'reachable', gone: 'down' }), {
    discovery: { builtinRoot: noopOnlyRoot() },
  });
  const res = await app.inject({ url: '/api/v1/providers/status' });
  t.equal(res.statusCode, 200);
  const { checks } = res.json();
  t.equal(checks['memory/up'], 'ok');
  t.equal(checks['memory/half'], 'reachable');
  t.equal(checks['memory/gone'], 'down');
  t.equal(checks['tools/probe_tools'], 'ok', 'auto instance of the second kind of the fixture package');
});
