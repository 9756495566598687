import type { EvaluationsProvider } from '../../core/primitives/evaluations.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

/** Case names, so a provider's test can skip them by name with a reason. */
export const EVALUATIONS_CASES = {
  evaluators: 'evaluator lifecycle: create, get, list, update, delete',
  paging: 'evaluator list pages by max_results and next_token',
  badToken: 'a next_token that no page produced is rejected with 400',
  evaluate: 'evaluate echoes evaluator_id and target and returns at least one result',
  scores: 'scores: create, get, list filtered by trace_id and name, delete',
  scorePaging: 'score list pages by page and limit',
  onlineConfigs: 'online configs: create, get, list, delete',
  unsupported: 'capabilities declared false have no method or reject with 501',
} as const;

export interface EvaluationsSuiteOptions extends SuiteOptions<EvaluationsProvider> {
  /** An evaluator_type the provider accepts (default: the first declared, else `numeric`). */
  evaluatorType?: string;
}

const status = (err: unknown) => (err as { statusCode?: number }).statusCode;

/** The evaluations suite: every evaluations provider runs it with its own runner and named skips. */
export async function evaluationsSuite(t: Runner, opts: EvaluationsSuiteOptions): Promise<void> {
  const run = caseRunner(t, opts);
  const typeFor = (p: EvaluationsProvider) =>
    opts.evaluatorType ??
    (p.capabilities.evaluator_types === 'any' ? 'numeric' : (p.capabilities.evaluator_types[0] ?? 'numeric'));

  await run(EVALUATIONS_CASES.evaluators, async (t, p) => {
    const type = typeFor(p);
    const ev = await p.createEvaluator({
      name: 'helpfulness',
      evaluator_type: type,
      config: { scale: 5 },
      description: 'judge',
    });
    t.match(ev, { name: 'helpfulness', evaluator_type: type, config: { scale: 5 }, description: 'judge' });
    t.ok(ev.evaluator_id.length > 0, 'evaluator_id assigned');
    t.same(await p.getEvaluator(ev.evaluator_id), ev);
    t.same(
      (await p.listEvaluators({ max_results: 100 })).evaluators.map((e) => e.evaluator_id),
      [ev.evaluator_id],
    );
    const upd = await p.updateEvaluator(ev.evaluator_id, { description: 'better judge' });
    t.match(
      upd,
      { evaluator_id: ev.evaluator_id, name: 'helpfulness', config: { scale: 5 }, description: 'better judge' },
      'update keeps fields not given',
    );
    t.equal(await p.updateEvaluator('nope', { description: 'x' }), undefined, 'unknown update is undefined');
    t.equal(await p.deleteEvaluator(ev.evaluator_id), true);
    t.equal(await p.getEvaluator(ev.evaluator_id), undefined);
    t.equal(await p.deleteEvaluator(ev.evaluator_id), false, 'deleting twice reports false');
  });

  await run(EVALUATIONS_CASES.paging, async (t, p) => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push(
        (await p.createEvaluator({ name: `e${i}`, evaluator_type: typeFor(p), config: {}, description: '' }))
          .evaluator_id,
      );
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await p.listEvaluators({ max_results: 2, next_token: token });
      t.ok(page.evaluators.length <= 2, 'page size respected');
      seen.push(...page.evaluators.map((e) => e.evaluator_id));
      token = page.next_token ?? undefined;
      pages++;
    } while (token && pages < 10);
    t.equal(pages, 3);
    t.same([...seen].sort(), [...made].sort(), 'every evaluator exactly once');
  });

  await run(EVALUATIONS_CASES.badToken, async (t, p) => {
    const err = await p.listEvaluators({ max_results: 2, next_token: '!!not-a-token!!' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.equal(status(err), 400);
  });

  await run(EVALUATIONS_CASES.evaluate, async (t, p) => {
    const ev = await p.createEvaluator({ name: 'correct', evaluator_type: typeFor(p), config: {}, description: '' });
    const out = await p.evaluate({
      evaluator_id: ev.evaluator_id,
      target: 'trace-1',
      input_data: 'q',
      output_data: 'a',
      expected_output: 'a',
      metadata: { value: 1 },
    });
    t.equal(out.evaluator_id, ev.evaluator_id);
    t.equal(out.target, 'trace-1');
    t.ok(out.results.length >= 1, 'at least one result');
    t.equal(typeof out.placeholder, 'boolean');
    for (const r of out.results)
      t.ok(typeof r.name === 'string' && typeof r.explanation === 'string', 'result has name and explanation');
    t.equal((await p.evaluate({ evaluator_id: ev.evaluator_id })).target, null, 'no target is null');
  });

  await run(EVALUATIONS_CASES.scores, async (t, p) => {
    const a = await p.createScore!({
      name: 'accuracy',
      value: 0.9,
      trace_id: 'tr-1',
      data_type: 'NUMERIC',
      comment: 'good',
    });
    const b = await p.createScore!({ name: 'tone', value: 'polite', trace_id: 'tr-2', data_type: 'CATEGORICAL' });
    t.match(a, { name: 'accuracy', value: 0.9, trace_id: 'tr-1', data_type: 'NUMERIC', comment: 'good' });
    t.same(await p.getScore!(a.score_id), a);
    t.same(
      (await p.listScores!({ trace_id: 'tr-2', page: 1, limit: 50 })).scores.map((s) => s.score_id),
      [b.score_id],
    );
    t.same(
      (await p.listScores!({ name: 'accuracy', page: 1, limit: 50 })).scores.map((s) => s.score_id),
      [a.score_id],
    );
    t.equal(await p.deleteScore!(a.score_id), true);
    t.equal(await p.getScore!(a.score_id), undefined);
  });

  await run(EVALUATIONS_CASES.scorePaging, async (t, p) => {
    for (let i = 0; i < 3; i++) await p.createScore!({ name: 'n', value: i, trace_id: 'paged' });
    const first = await p.listScores!({ trace_id: 'paged', page: 1, limit: 2 });
    const second = await p.listScores!({ trace_id: 'paged', page: 2, limit: 2 });
    t.equal(first.total, 3);
    t.equal(first.scores.length, 2);
    t.equal(second.scores.length, 1);
  });

  await run(EVALUATIONS_CASES.onlineConfigs, async (t, p) => {
    const ev = await p.createEvaluator({ name: 'live', evaluator_type: typeFor(p), config: {}, description: '' });
    const cfg = await p.createOnlineConfig!({
      name: 'sample-all',
      evaluator_ids: [ev.evaluator_id],
      sampling_rate: 0.5,
      description: '',
      config: {},
    });
    t.match(cfg, { name: 'sample-all', evaluator_ids: [ev.evaluator_id], sampling_rate: 0.5 });
    t.equal((await p.getOnlineConfig!(cfg.config_id))?.config_id, cfg.config_id);
    t.ok((await p.listOnlineConfigs!()).configs.some((c) => c.config_id === cfg.config_id));
    t.equal(await p.deleteOnlineConfig!(cfg.config_id), true);
    t.equal(await p.getOnlineConfig!(cfg.config_id), undefined);
  });

  await run(EVALUATIONS_CASES.unsupported, async (t, p) => {
    t.equal(typeof p.capabilities.scores, 'boolean', 'scores capability declared');
    t.equal(typeof p.capabilities.online_configs, 'boolean', 'online_configs capability declared');
    const optional: Array<[string, (() => Promise<unknown>) | undefined]> = [];
    if (!p.capabilities.scores)
      optional.push(['createScore', p.createScore && (() => p.createScore!({ name: 'x', value: 1 }))]);
    if (!p.capabilities.scores)
      optional.push(['listScores', p.listScores && (() => p.listScores!({ page: 1, limit: 10 }))]);
    if (!p.capabilities.online_configs) {
      optional.push([
        'createOnlineConfig',
        p.createOnlineConfig &&
          (() =>
            p.createOnlineConfig!({ name: 'x', evaluator_ids: ['e'], sampling_rate: 1, description: '', config: {} })),
      ]);
      optional.push(['listOnlineConfigs', p.listOnlineConfigs && (() => p.listOnlineConfigs!())]);
    }
    for (const [method, call] of optional) {
      if (call)
        t.equal(
          status(
            await call().then(
              () => undefined,
              (err: unknown) => err,
            ),
          ),
          501,
          `${method} rejects with 501`,
        );
      else t.equal((p as unknown as Record<string, unknown>)[method], undefined, `${method} is absent`);
    }
  });
}
