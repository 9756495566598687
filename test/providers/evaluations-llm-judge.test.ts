import t from 'tap';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { LlmProvider } from '../../core/primitives/llm.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { openStore, type Store } from '../../core/store.ts';
import { llmJudgeEvaluations, type LlmJudge } from '../../providers/llm-judge/provider.ts';
import { scriptedLlm } from '../../providers/scripted/index.ts';
import { storeObservability, type StoreObservability } from '../../providers/store-observability/provider.ts';
import { evaluationsSuite } from '../conformance/evaluations.ts';
import type { Runner } from '../conformance/kit.ts';
import { startRedis } from '../fixtures/redis-server.ts';
import { tempDir } from '../helpers/app.ts';

t.setTimeout(900_000);

type Script = Array<{ match?: string; content?: string }>;
const VERDICT: Script = [{ match: '^Judge this', content: '{"score": 1, "reasoning": "fine"}' }];

/** A judge on a fresh store: the scripted LLM answers the judge, the store provider records scores. */
async function setup(store: Store, script: Script = VERDICT, options: Record<string, unknown> = {}) {
  const logger = pino({ level: 'silent' });
  let obs: StoreObservability | undefined;
  let llm: LlmProvider | undefined;
  const ctx: ProviderContext = {
    store,
    logger,
    dataDir: tempDir(),
    lookup: (kind) => (kind === 'observability' ? obs : kind === 'llm' ? llm : undefined),
  };
  const judge = (await llmJudgeEvaluations.create(`judge-${randomUUID()}`, options, ctx)) as LlmJudge;
  llm = (await scriptedLlm.create('scripted', { responses: script }, ctx)) as LlmProvider;
  obs = await storeObservability.create(`obs-${randomUUID()}`, { sweep_interval_ms: 0 }, ctx);
  const close = async () => {
    await judge.close();
    await obs!.close();
    await store.close();
  };
  return { judge, obs, close };
}

const suiteOn = (open: () => Promise<Store>) => ({
  make: async () => {
    const { judge, close } = await setup(await open());
    return Object.assign(Object.create(judge), { close }) as LlmJudge;
  },
});

t.test('llm_judge on memory passes the evaluations conformance suite', (t) =>
  evaluationsSuite(
    t as unknown as Runner,
    suiteOn(() => openStore({ backend: 'memory' })),
  ),
);

t.test('llm_judge on SQLite passes the evaluations conformance suite (scores CRUD and filters)', (t) =>
  evaluationsSuite(
    t as unknown as Runner,
    suiteOn(() => openStore({ backend: 'sqlite', dataDir: tempDir() })),
  ),
);

t.test('llm_judge on Redis passes the evaluations conformance suite (scores CRUD and filters)', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  await evaluationsSuite(
    t as unknown as Runner,
    suiteOn(() => openStore({ backend: 'redis', url: redis.url })),
  );
});

t.test('Builtin.Correctness returns the scripted score and records it on the trace', async (t) => {
  const { judge, obs, close } = await setup(await openStore({ backend: 'memory' }), [
    { match: '^Judge this', content: 'Here you go: {"score": 4, "reasoning": "Same capital, less detail."}' },
  ]);
  t.teardown(close);
  await obs.ingestTrace({ trace_id: 'tr', input: 'Capital of France?', output: 'Paris' });
  const out = await judge.evaluate({ evaluator_id: 'Builtin.Correctness', target: 'tr', expected_output: 'Paris' });
  t.match(out, {
    evaluator_id: 'Builtin.Correctness',
    target: 'tr',
    placeholder: false,
    scores: [{ name: 'Builtin.Correctness', value: 4, data_type: 'NUMERIC', comment: 'Same capital, less detail.' }],
  });
  const recorded = await obs.listScores!({ trace_id: 'tr', limit: 50, offset: 0 });
  t.match(recorded.scores, [{ name: 'Builtin.Correctness', value: 4, score_id: out.scores![0]!.score_id }]);
  await t.rejects(judge.evaluate({ evaluator_id: 'Builtin.Correctness', target: 'tr' }), {
    statusCode: 400,
    code: 'SB_ERR_EVALUATIONS_EXPECTED_OUTPUT_REQUIRED',
  });
});

t.test('a malformed verdict is retried once, then a 502 naming the evaluator', async (t) => {
  const fixed = await setup(await openStore({ backend: 'memory' }), [
    { match: '^Judge this', content: 'I think it is pretty good!' },
    { match: '^Your previous answer', content: '{"score": 5, "reasoning": "now in JSON"}' },
  ]);
  t.teardown(fixed.close);
  const ok = await fixed.judge.evaluate({ evaluator_id: 'Builtin.Helpfulness', input_data: 'q', output_data: 'a' });
  t.match(ok.scores, [{ value: 5, comment: 'now in JSON' }], 'the retry succeeded');

  const broken = await setup(await openStore({ backend: 'memory' }), [
    { match: '^Judge this', content: '{"score": 9}' },
    { match: '^Your previous answer', content: 'still not JSON' },
  ]);
  t.teardown(broken.close);
  await t.rejects(broken.judge.evaluate({ evaluator_id: 'Builtin.Coherence', input_data: 'q', output_data: 'a' }), {
    statusCode: 502,
    code: 'SB_ERR_EVALUATIONS_JUDGE_MALFORMED',
    message: /Evaluator 'Builtin.Coherence'/,
  });
});

t.test('categories, unknown evaluator and target, bad config and values', async (t) => {
  const { judge, close } = await setup(await openStore({ backend: 'memory' }), [
    { match: '^Judge this', content: '{"score": "polite", "reasoning": "courteous"}' },
  ]);
  t.teardown(close);
  const tone = await judge.createEvaluator({
    name: 'tone',
    evaluator_type: 'llm_judge',
    config: { criteria: 'Tone of the reply', categories: ['polite', 'rude'] },
    description: '',
  });
  const out = await judge.evaluate({ evaluator_id: tone.evaluator_id, input_data: 'hi', output_data: 'hello!' });
  t.match(out.scores, [{ name: 'tone', value: 'polite', data_type: 'CATEGORICAL' }]);
  await t.rejects(judge.evaluate({ evaluator_id: 'nope', output_data: 'x' }), {
    statusCode: 404,
    code: 'SB_ERR_EVALUATIONS_EVALUATOR_NOT_FOUND',
  });
  await t.rejects(judge.evaluate({ evaluator_id: 'Builtin.Relevance', target: 'no-such-trace' }), {
    statusCode: 404,
    code: 'SB_ERR_EVALUATIONS_TARGET_NOT_FOUND',
  });
  await t.rejects(
    judge.createEvaluator({
      name: 'x',
      evaluator_type: 'llm_judge',
      config: { scale: { min: 5, max: 1 } },
      description: '',
    }),
    { statusCode: 400, code: 'SB_ERR_EVALUATIONS_BAD_CONFIG' },
  );
  await t.rejects(judge.createScore!({ name: 'n', value: 'high', data_type: 'NUMERIC' }), {
    statusCode: 422,
    code: 'SB_ERR_EVALUATIONS_SCORE_VALUE',
  });
});

t.test('an online config with sampling 1.0 scores every new trace; a filter and sampling 0 score none', async (t) => {
  const { judge, obs, close } = await setup(await openStore({ backend: 'memory' }), [
    { match: '^Judge this', content: '{"score": 3, "reasoning": "ok"}' },
  ]);
  t.teardown(close);
  const all = await judge.createOnlineConfig!({
    name: 'all agents',
    evaluator_ids: ['Builtin.Helpfulness'],
    sampling_rate: 1,
    description: '',
    config: {},
    filter: { tag: 'agent' },
  });
  await judge.createOnlineConfig!({
    name: 'never',
    evaluator_ids: ['Builtin.Coherence'],
    sampling_rate: 0,
    description: '',
    config: {},
  });
  await t.rejects(
    judge.createOnlineConfig!({ name: 'x', evaluator_ids: ['ghost'], sampling_rate: 1, description: '', config: {} }),
    { statusCode: 404, code: 'SB_ERR_EVALUATIONS_EVALUATOR_NOT_FOUND' },
  );
  for (let i = 0; i < 5; i++) await obs.ingestTrace({ trace_id: `a${i}`, tags: ['agent'], input: 'q', output: 'a' });
  await obs.ingestTrace({ trace_id: 'other', tags: ['batch'] });
  await new Promise((r) => setTimeout(r, 10));
  await judge.online().drained();
  for (let i = 0; i < 5; i++)
    t.match(
      (await obs.listScores!({ trace_id: `a${i}`, limit: 50, offset: 0 })).scores,
      [{ name: 'Builtin.Helpfulness', value: 3, metadata: { config_id: all.config_id } }],
      `trace a${i} scored once`,
    );
  t.equal((await obs.listScores!({ trace_id: 'other', limit: 50, offset: 0 })).total, 0, 'filtered out');
  t.equal((await judge.listScores!({ config_id: all.config_id, page: 1, limit: 50 })).total, 5);
});
