import t from 'tap';
import type { EvaluationsProvider } from '../../core/primitives/evaluations.ts';
import { EVALUATIONS_CASES, evaluationsSuite } from '../conformance/evaluations.ts';
// tap's overloaded `test` does not match the kit's Runner signature in TypeScript; at runtime it is the same.
import type { Runner } from '../conformance/kit.ts';
import { firstFactory, writeProviderPackage } from '../fixtures/provider-package.ts';
import { caller, makeApp } from '../helpers/app.ts';

/**
 * A score-recording evaluations provider package (in memory), written for the
 * test, so the score routes are exercised with data as well as with noop's 501.
 */
function recorderPackage(): string {
  return writeProviderPackage({
    name: 'fixture-score-recorder',
    provides: ['evaluations'],
    source: `import { randomUUID } from 'node:crypto';
const fail = (statusCode, message) => Object.assign(new Error(message), { statusCode });
const page = (items, max, token) => {
  const off = token === undefined ? 0 : Number(token);
  if (!Number.isInteger(off) || off < 0) throw fail(400, 'bad next_token');
  return { items: items.slice(off, off + max), next: off + max < items.length ? String(off + max) : null };
};
export const providers = [{
  type: 'recorder', kind: 'evaluations',
  create: (name) => {
    const evs = new Map(); const scores = new Map();
    const record = (req) => {
      const s = { score_id: randomUUID(), name: req.name, value: req.value, trace_id: req.trace_id ?? null, observation_id: req.observation_id ?? null,
        comment: req.comment ?? null, data_type: req.data_type ?? null, config_id: req.config_id ?? null, metadata: req.metadata ?? {}, created_at: new Date().toISOString() };
      scores.set(s.score_id, s); return s;
    };
    return {
      name, type: 'recorder', kind: 'evaluations',
      capabilities: { evaluators: true, evaluate: true, evaluator_types: ['numeric', 'boolean', 'categorical'], scores: true, online_configs: false },
      async createEvaluator(req) { const now = new Date().toISOString(); const e = { evaluator_id: randomUUID(), config: {}, description: '', ...req, created_at: now, updated_at: now }; evs.set(e.evaluator_id, e); return { ...e }; },
      async getEvaluator(id) { const e = evs.get(id); return e && { ...e }; },
      async listEvaluators(q) { const p = page([...evs.values()], q.max_results, q.next_token); return { evaluators: p.items, next_token: p.next }; },
      async updateEvaluator(id, patch) { const e = evs.get(id); if (!e) return undefined; const n = { ...e, ...patch, updated_at: new Date().toISOString() }; evs.set(id, n); return { ...n }; },
      async deleteEvaluator(id) { return evs.delete(id); },
      async evaluate(req) {
        const value = req.metadata?.value;
        if (value === undefined) return { evaluator_id: req.evaluator_id, target: req.target ?? null, placeholder: false, results: [{ name: req.evaluator_id, value: null, explanation: 'no metadata.value: nothing recorded' }] };
        const s = record({ name: req.evaluator_id, value, trace_id: req.target });
        return { evaluator_id: req.evaluator_id, target: req.target ?? null, placeholder: false, results: [{ name: req.evaluator_id, value, explanation: 'recorded', score_id: s.score_id }] };
      },
      async createScore(req) { return record(req); },
      async listScores(q) {
        const hits = [...scores.values()].filter((s) => ['trace_id', 'name', 'config_id', 'data_type'].every((k) => q[k] === undefined || s[k] === q[k]));
        return { scores: hits.slice((q.page - 1) * q.limit, q.page * q.limit), page: q.page, limit: q.limit, total: hits.length };
      },
      async getScore(id) { return scores.get(id); },
      async deleteScore(id) { return scores.delete(id); },
      healthcheck: async () => 'ok', close: async () => {},
    };
  },
}];\n`,
  });
}

const recorderConfig = (dir: string) => ({
  provider_packages: [dir],
  providers: {
    evaluations: { default: 'noop', instances: { noop: { type: 'noop' }, recorder: { type: 'recorder' } } },
  },
});
const viaRecorder = { 'x-provider-evaluations': 'recorder' };

t.test('noop mode: evaluators CRUD with data, evaluate is a placeholder', async (t) => {
  const app = await makeApp(t);
  const as = caller(t, app);
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/evaluations/evaluators',
    payload: { name: 'helpful', evaluator_type: 'anything-goes', config: { k: 1 } },
  });
  t.equal(created.statusCode, 201);
  const ev = created.json();
  t.match(ev, {
    evaluator_id: /./,
    name: 'helpful',
    evaluator_type: 'anything-goes',
    config: { k: 1 },
    description: '',
  });
  const id = ev.evaluator_id as string;
  t.same((await app.inject({ method: 'GET', url: `/api/v1/evaluations/evaluators/${id}` })).json(), ev);
  t.same((await app.inject({ method: 'GET', url: '/api/v1/evaluations/evaluators' })).json(), {
    evaluators: [ev],
    next_token: null,
  });
  const upd = await app.inject({
    method: 'PUT',
    url: `/api/v1/evaluations/evaluators/${id}`,
    payload: { description: 'judges helpfulness' },
  });
  t.equal(upd.statusCode, 200);
  t.match(upd.json(), { name: 'helpful', description: 'judges helpfulness' });

  const out = await app.inject({
    method: 'POST',
    url: '/api/v1/evaluations/evaluate',
    payload: { evaluator_id: id, target: 'trace-1', input_data: 'q', output_data: 'a' },
  });
  t.equal(out.statusCode, 200);
  t.match(out.json(), {
    evaluator_id: id,
    target: 'trace-1',
    placeholder: true,
    results: [{ name: 'helpful', value: 0, explanation: /Placeholder/ }],
  });

  await as().delete(`/api/v1/evaluations/evaluators/${id}`, 204);
  for (const [method, payload] of [['GET'], ['PUT', { description: 'x' }], ['DELETE']] as const) {
    const res = await app.inject({ method, url: `/api/v1/evaluations/evaluators/${id}`, payload });
    t.equal(res.statusCode, 404, `${method} deleted evaluator`);
    t.equal(res.json().code, 'SB_ERR_EVALUATIONS_EVALUATOR_NOT_FOUND');
  }
});

t.test('evaluator list: max_results defaults to 100, pages by next_token', async (t) => {
  const app = await makeApp(t);
  const as = caller(t, app);
  for (let i = 0; i < 102; i++)
    await app.inject({
      method: 'POST',
      url: '/api/v1/evaluations/evaluators',
      payload: { name: `e${i}`, evaluator_type: 'x' },
    });
  const first = (await app.inject({ method: 'GET', url: '/api/v1/evaluations/evaluators' })).json();
  t.equal(first.evaluators.length, 100, 'default page size 100');
  const second = (
    await app.inject({ method: 'GET', url: `/api/v1/evaluations/evaluators?next_token=${first.next_token}` })
  ).json();
  t.equal(second.evaluators.length, 2);
  t.equal(second.next_token, null);
  const small = (await app.inject({ method: 'GET', url: '/api/v1/evaluations/evaluators?max_results=5' })).json();
  t.equal(small.evaluators.length, 5);
  await as().get('/api/v1/evaluations/evaluators?next_token=@@', 400);
});

t.test('bad input is 4xx naming what to fix', async (t) => {
  const app = await makeApp(t);
  const noType = await app.inject({ method: 'POST', url: '/api/v1/evaluations/evaluators', payload: { name: 'x' } });
  t.equal(noType.statusCode, 422);
  t.match(noType.json().detail, [{ loc: ['body', 'evaluator_type'] }]);
  const noId = await app.inject({ method: 'POST', url: '/api/v1/evaluations/evaluate', payload: { target: 't' } });
  t.equal(noId.statusCode, 422);
  t.match(noId.json().detail, [{ loc: ['body', 'evaluator_id'] }]);
  const extra = await app.inject({
    method: 'POST',
    url: '/api/v1/evaluations/evaluate',
    payload: { evaluator_id: 'e', bogus: 1 },
  });
  t.equal(extra.statusCode, 422);
});

t.test('noop: scores and online configs answer 501 naming the backend that has them', async (t) => {
  const app = await makeApp(t);
  const routes: Array<[string, string, unknown?]> = [
    ['POST', '/api/v1/evaluations/scores', { name: 'acc', value: 1 }],
    ['GET', '/api/v1/evaluations/scores'],
    ['GET', '/api/v1/evaluations/scores/s1'],
    ['DELETE', '/api/v1/evaluations/scores/s1'],
  ];
  for (const [method, url, payload] of routes) {
    const res = await app.inject({ method: method as 'GET', url, payload: payload as object });
    t.equal(res.statusCode, 501, `${method} ${url}`);
    t.equal(res.json().code, 'SB_ERR_CAPABILITY_MISSING');
    t.match(
      res.json().detail,
      /evaluations provider 'noop'.*score-recording.*capability 'scores'.*X-Provider-Evaluations/,
    );
  }
  const configs: Array<[string, string, unknown?]> = [
    ['POST', '/api/v1/evaluations/online-configs', { name: 'c', evaluator_ids: ['e'] }],
    ['GET', '/api/v1/evaluations/online-configs'],
    ['GET', '/api/v1/evaluations/online-configs/c1'],
    ['DELETE', '/api/v1/evaluations/online-configs/c1'],
  ];
  for (const [method, url, payload] of configs) {
    const res = await app.inject({ method: method as 'GET', url, payload: payload as object });
    t.equal(res.statusCode, 501, `${method} ${url}`);
    t.match(res.json().detail, /evaluations provider 'noop'.*managed-cloud.*capability 'online_configs'/);
  }
});

t.test('a score-recording provider serves the score routes; its types are enforced', async (t) => {
  const app = await makeApp(t, recorderConfig(recorderPackage()));
  const as = caller(t, app);
  const badType = await app.inject({
    method: 'POST',
    url: '/api/v1/evaluations/evaluators',
    headers: viaRecorder,
    payload: { name: 'x', evaluator_type: 'TRACE' },
  });
  t.equal(badType.statusCode, 400);
  t.equal(badType.json().code, 'SB_ERR_EVALUATIONS_BAD_TYPE');
  t.match(badType.json().detail, /'TRACE'.*Supported: numeric, boolean, categorical/);
  await as(viaRecorder).post('/api/v1/evaluations/evaluators', { name: 'x', evaluator_type: 'numeric' }, 201);

  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/evaluations/scores',
    headers: viaRecorder,
    payload: { name: 'accuracy', value: 0.75, trace_id: 'tr-1', data_type: 'NUMERIC' },
  });
  t.equal(created.statusCode, 201);
  const sid = created.json().score_id as string;
  t.match(created.json(), { name: 'accuracy', value: 0.75, trace_id: 'tr-1', data_type: 'NUMERIC', comment: null });
  const evaluated = await app.inject({
    method: 'POST',
    url: '/api/v1/evaluations/evaluate',
    headers: viaRecorder,
    payload: { evaluator_id: 'tone', target: 'tr-1', metadata: { value: 'warm' } },
  });
  t.match(evaluated.json(), { placeholder: false, results: [{ name: 'tone', value: 'warm', score_id: /./ }] });

  const list = await app.inject({
    method: 'GET',
    url: '/api/v1/evaluations/scores?trace_id=tr-1&limit=10',
    headers: viaRecorder,
  });
  t.equal(list.statusCode, 200);
  t.match(list.json(), { page: 1, limit: 10, total: 2 });
  t.same(
    (await app.inject({ method: 'GET', url: '/api/v1/evaluations/scores?name=accuracy', headers: viaRecorder }))
      .json()
      .scores.map((s: { score_id: string }) => s.score_id),
    [sid],
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/evaluations/scores?data_type=NOPE', headers: viaRecorder }))
      .statusCode,
    422,
  );
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/evaluations/scores/${sid}`, headers: viaRecorder })).json()
      .score_id,
    sid,
  );
  await as(viaRecorder).delete(`/api/v1/evaluations/scores/${sid}`, 204);
  const gone = await app.inject({ method: 'GET', url: `/api/v1/evaluations/scores/${sid}`, headers: viaRecorder });
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().code, 'SB_ERR_EVALUATIONS_SCORE_NOT_FOUND');
  await as(viaRecorder).delete(`/api/v1/evaluations/scores/${sid}`, 404);
  const missingValue = await app.inject({
    method: 'POST',
    url: '/api/v1/evaluations/scores',
    headers: viaRecorder,
    payload: { name: 'x' },
  });
  t.equal(missingValue.statusCode, 422);

  const cfg = await app.inject({ method: 'GET', url: '/api/v1/evaluations/online-configs', headers: viaRecorder });
  t.equal(cfg.statusCode, 501, 'online configs stay managed-cloud only');
  t.match(cfg.json().detail, /provider 'recorder'/);

  const unknown = await app.inject({
    method: 'GET',
    url: '/api/v1/evaluations/evaluators',
    headers: { 'x-provider-evaluations': 'nope' },
  });
  t.equal(unknown.statusCode, 400);
  t.match(unknown.json().detail, /Unknown evaluations provider 'nope'. Available: noop, recorder/);
});

t.test('the score-recording fixture passes the evaluations conformance suite (score cases included)', async (t) => {
  const factory = await firstFactory<EvaluationsProvider>(recorderPackage());
  await evaluationsSuite(t as unknown as Runner, {
    make: async () => factory.create('recorder', {}, {} as never),
    skip: [{ reason: 'online configs are managed-cloud only', tests: [EVALUATIONS_CASES.onlineConfigs] }],
  });
});
