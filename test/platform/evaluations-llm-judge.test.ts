import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { agentApp } from '../agents/helpers.ts';

t.setTimeout(900_000);

const E = '/api/v1/evaluations';
const O = '/api/v1/observability';

/** Agents answer from the script; the judge's prompt (it starts "Judge this") gets a verdict. */
async function judgeApp(t: Parameters<typeof agentApp>[0], verdict = '{"score": 5, "reasoning": "great"}') {
  return agentApp(t, {
    script: [
      { match: '^Judge this', content: verdict },
      { match: '^Your previous answer', content: verdict },
      { content: 'the agent answer' },
    ],
    config: { providers: { evaluations: { default: 'judge', instances: { judge: { type: 'llm_judge' } } } } },
  });
}

async function scoresOf(app: FastifyInstance, traceId: string) {
  for (let i = 0; i < 400; i++) {
    const r = (await app.inject({ url: `${O}/scores?trace_id=${traceId}` })).json();
    if (r.total > 0) return r.scores;
    await new Promise((res) => setTimeout(res, 25));
  }
  return [];
}

t.test('POST /evaluate with Builtin.Correctness over HTTP: the scripted score, recorded on the trace', async (t) => {
  const app = await judgeApp(t, '{"score": 4, "reasoning": "right answer"}');
  await app.inject({ method: 'POST', url: `${O}/traces`, payload: { trace_id: 'tr', input: 'q', output: 'a' } });
  const r = await app.inject({
    method: 'POST',
    url: `${E}/evaluate`,
    payload: { evaluator_id: 'Builtin.Correctness', target: 'tr', expected_output: 'a' },
  });
  t.equal(r.statusCode, 200, r.body);
  t.match(r.json(), {
    evaluator_id: 'Builtin.Correctness',
    placeholder: false,
    scores: [{ name: 'Builtin.Correctness', value: 4, data_type: 'NUMERIC', comment: 'right answer' }],
  });
  const listed = await app.inject({ url: `${E}/scores?trace_id=tr&name=Builtin.Correctness` });
  t.match(listed.json(), { total: 1, scores: [{ value: 4, trace_id: 'tr' }] }, 'visible through /evaluations/scores');
});

t.test(
  'bad input: unknown evaluator 404, unknown target 404, string for NUMERIC 422, malformed judge 502',
  async (t) => {
    const app = await judgeApp(t, 'not a verdict at all');
    const unknown = await app.inject({
      method: 'POST',
      url: `${E}/evaluate`,
      payload: { evaluator_id: 'nope', output_data: 'x' },
    });
    t.equal(unknown.statusCode, 404);
    t.match(unknown.json(), { code: 'SB_ERR_EVALUATIONS_EVALUATOR_NOT_FOUND', detail: /'nope'/ });
    const target = await app.inject({
      method: 'POST',
      url: `${E}/evaluate`,
      payload: { evaluator_id: 'Builtin.Helpfulness', target: 'ghost' },
    });
    t.equal(target.statusCode, 404);
    t.match(target.json(), { code: 'SB_ERR_EVALUATIONS_TARGET_NOT_FOUND', detail: /'ghost'/ });
    const str = await app.inject({
      method: 'POST',
      url: `${E}/scores`,
      payload: { name: 'accuracy', value: 'high', data_type: 'NUMERIC', trace_id: 'x' },
    });
    t.equal(str.statusCode, 422);
    t.match(str.json(), { code: 'SB_ERR_EVALUATIONS_SCORE_VALUE', detail: /needs a number/ });
    const obsStr = await app.inject({
      method: 'POST',
      url: `${O}/scores`,
      payload: { name: 'accuracy', value: 'high', data_type: 'NUMERIC', trace_id: 'x' },
    });
    t.equal(obsStr.statusCode, 422, 'the same rule on /observability/scores');
    const bad = await app.inject({
      method: 'POST',
      url: `${E}/evaluate`,
      payload: { evaluator_id: 'Builtin.Coherence', input_data: 'q', output_data: 'a' },
    });
    t.equal(bad.statusCode, 502);
    t.match(bad.json(), { code: 'SB_ERR_EVALUATIONS_JUDGE_MALFORMED', detail: /Evaluator 'Builtin.Coherence'/ });
  },
);

t.test('score CRUD and filters through /evaluations/scores', async (t) => {
  const app = await judgeApp(t);
  const made = await app.inject({
    method: 'POST',
    url: `${E}/scores`,
    payload: {
      name: 'tone',
      value: 'warm',
      data_type: 'CATEGORICAL',
      trace_id: 't1',
      config_id: 'c1',
      comment: 'nice',
    },
  });
  t.equal(made.statusCode, 201, made.body);
  t.match(made.json(), { name: 'tone', value: 'warm', trace_id: 't1', config_id: 'c1', comment: 'nice' });
  await app.inject({ method: 'POST', url: `${E}/scores`, payload: { name: 'acc', value: 0.5, data_type: 'NUMERIC' } });
  t.equal((await app.inject({ url: `${E}/scores?data_type=CATEGORICAL` })).json().total, 1);
  t.equal((await app.inject({ url: `${E}/scores?config_id=c1` })).json().total, 1);
  t.match((await app.inject({ url: `${E}/scores?name=acc` })).json().scores, [{ trace_id: null, value: 0.5 }]);
  const id = made.json().score_id;
  t.equal((await app.inject({ url: `${E}/scores/${id}` })).json().score_id, id);
  t.equal((await app.inject({ method: 'DELETE', url: `${E}/scores/${id}` })).statusCode, 204);
  t.equal((await app.inject({ url: `${E}/scores/${id}` })).statusCode, 404);
});

t.test('an online config with sampling 1.0 scores every new agent trace', async (t) => {
  const app = await judgeApp(t);
  const cfg = await app.inject({
    method: 'POST',
    url: `${E}/online-configs`,
    payload: {
      name: 'every agent run',
      evaluator_ids: ['Builtin.Helpfulness'],
      sampling_rate: 1,
      filter: { tag: 'agent' },
    },
  });
  t.equal(cfg.statusCode, 201, cfg.body);
  await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'helper', model: 'm' } });
  const traces: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await app.inject({
      method: 'POST',
      url: '/api/v1/agents/helper/chat',
      payload: { message: `question ${i}` },
    });
    t.equal(r.statusCode, 200, r.body);
    traces.push(r.json().metadata.trace_id);
  }
  for (const id of traces)
    t.match(
      await scoresOf(app, id),
      [{ name: 'Builtin.Helpfulness', value: 5, comment: 'great', metadata: { config_id: cfg.json().config_id } }],
      `trace ${id} scored`,
    );
  const unknown = await app.inject({
    method: 'POST',
    url: `${E}/online-configs`,
    payload: { name: 'x', evaluator_ids: ['ghost'] },
  });
  t.equal(unknown.statusCode, 404, 'an online config naming an unknown evaluator');
});

t.test(
  'on an observability provider that cannot read scores back, score routes are a 501 before anything is written',
  async (t) => {
    const app = await judgeApp(t);
    const headers = { 'x-provider-observability': 'noop' };
    const r = await app.inject({
      method: 'POST',
      url: `${E}/scores`,
      payload: { name: 'acc', value: 1, data_type: 'NUMERIC', trace_id: 't' },
    });
    t.equal(r.statusCode, 201, 'on the default (store) it works');
    // The judge records through its own observability instance (the default): pin noop as the default instead.
    const noopApp = await agentApp(t, {
      script: [{ content: 'x' }],
      config: {
        providers: {
          evaluations: { default: 'judge', instances: { judge: { type: 'llm_judge' } } },
          observability: { default: 'noop', instances: { noop: { type: 'noop' } } },
        },
      },
    });
    const refused = await noopApp.inject({
      method: 'POST',
      url: `${E}/scores`,
      headers,
      payload: { name: 'acc', value: 1, data_type: 'NUMERIC', trace_id: 't' },
    });
    t.equal(refused.statusCode, 501, refused.body);
    t.match(refused.json(), { code: 'SB_ERR_EVALUATIONS_SCORES_UNSUPPORTED', detail: /observability provider 'noop'/ });
    t.equal(
      (await noopApp.inject({ url: '/api/v1/observability/scores', headers })).json().total,
      0,
      'nothing was written',
    );
  },
);
