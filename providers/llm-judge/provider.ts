import { notFound, unavailable } from '../../core/errors.ts';
import type {
  EvaluationsCapabilities,
  EvaluationsProvider,
  OnlineConfig,
  Evaluator,
  EvaluateRequest,
  EvaluateResponse,
} from '../../core/primitives/evaluations.ts';
import type { LlmProvider } from '../../core/primitives/llm.ts';
import type { ObservabilityProvider, Trace } from '../../core/primitives/observability.ts';
import type { ProviderContext, ProviderFactory } from '../../core/provider.ts';
import { EvaluatorStore } from './evaluators.ts';
import { judge, type Sample } from './judge.ts';
import { OnlineEvaluation, type OnlineStats } from './online.ts';
import { BUILTINS, rubricOfEvaluator, type Rubric } from './rubric.ts';
import { scoreMethods } from './scores.ts';

const CAPABILITIES: EvaluationsCapabilities = {
  evaluators: true,
  evaluate: true,
  evaluator_types: ['llm_judge'],
  scores: true,
  online_configs: true,
};

const text = (v: unknown): string =>
  v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
const num = (v: unknown, dflt: number) => (typeof v === 'number' && v >= 1 ? Math.floor(v) : dflt);

export interface LlmJudge extends EvaluationsProvider {
  /** Online evaluation counters, and a promise for when its queue is empty. */
  online(): { stats: OnlineStats; drained: () => Promise<void> };
}

async function create(name: string, options: Record<string, unknown>, ctx: ProviderContext): Promise<LlmJudge> {
  const evaluators = new EvaluatorStore(ctx.store.collection<Evaluator>(`evaluations:${name}:evaluators`));
  const obsName = typeof options.observability === 'string' ? options.observability : undefined;
  const obs = (): ObservabilityProvider => {
    const p = ctx.lookup('observability', obsName) as ObservabilityProvider | undefined;
    if (!p)
      throw unavailable(
        'SB_ERR_EVALUATIONS_OBSERVABILITY_MISSING',
        `The llm_judge evaluations provider '${name}' records scores through observability, and no observability provider${obsName ? ` '${obsName}'` : ''} is configured`,
      );
    return p;
  };
  const llmFor = (r: Rubric): LlmProvider => {
    const wanted = r.llm ?? (typeof options.llm === 'string' ? options.llm : undefined);
    const llm = ctx.lookup('llm', wanted) as LlmProvider | undefined;
    if (!llm)
      throw unavailable(
        'SB_ERR_EVALUATIONS_JUDGE_UNAVAILABLE',
        `The judge LLM${wanted ? ` '${wanted}'` : ''} of the evaluations provider '${name}' is not configured`,
      );
    return llm;
  };
  const withModel = (r: Rubric): Rubric =>
    r.model || typeof options.model !== 'string' ? r : { ...r, model: options.model };

  async function rubricFor(id: string): Promise<Rubric> {
    const builtin = BUILTINS[id];
    if (builtin) return withModel(builtin);
    const ev = await evaluators.get(id);
    if (!ev) throw notFound('SB_ERR_EVALUATIONS_EVALUATOR_NOT_FOUND', `Evaluator '${id}' not found`);
    return withModel(rubricOfEvaluator(ev));
  }

  const sampleOfTrace = (t: Trace, expected?: string): Sample => ({
    input: text(t.input),
    output: text(t.output),
    ...(expected !== undefined ? { expected } : {}),
  });

  const online = new OnlineEvaluation(
    ctx.store.collection<OnlineConfig>(`evaluations:${name}:online_configs`),
    { queueSize: num(options.online_queue_size, 1000), concurrency: num(options.online_concurrency, 2) },
    async (trace, evaluatorId, configId) => {
      const rubric = await rubricFor(evaluatorId);
      const verdict = await judge(llmFor(rubric), rubric, sampleOfTrace(trace), evaluatorId);
      const ingest = obs().ingestScore;
      if (!ingest) return;
      await ingest.call(obs(), {
        trace_id: trace.trace_id,
        name: verdict.name,
        value: verdict.value,
        data_type: verdict.data_type,
        comment: verdict.comment,
        metadata: { config_id: configId, evaluator_id: evaluatorId, source: 'online' },
      });
    },
    ctx.logger,
  );
  // Observability is built after evaluations: listen once it exists (and on every call, whichever comes first).
  const attach = () => {
    try {
      return online.attach(ctx.lookup('observability', obsName) as ObservabilityProvider | undefined);
    } catch {
      return false;
    }
  };
  let tries = 0;
  const timer = setInterval(() => {
    if (attach() || ++tries > 100) clearInterval(timer);
  }, 50);
  timer.unref();

  async function evaluate(req: EvaluateRequest): Promise<EvaluateResponse> {
    attach();
    const rubric = await rubricFor(req.evaluator_id);
    let sample: Sample;
    if (req.output_data !== undefined || req.target === undefined) {
      sample = { input: req.input_data ?? '', output: req.output_data ?? '' };
      if (req.expected_output !== undefined) sample.expected = req.expected_output;
    } else {
      const getTrace = obs().getTrace;
      const trace = getTrace && (await getTrace.call(obs(), req.target));
      if (!trace)
        throw notFound(
          'SB_ERR_EVALUATIONS_TARGET_NOT_FOUND',
          `Target trace '${req.target}' not found in observability`,
        );
      sample = sampleOfTrace(trace, req.expected_output);
      if (req.input_data !== undefined) sample.input = req.input_data;
    }
    const verdict = await judge(llmFor(rubric), rubric, sample, req.evaluator_id);
    let score_id: string | undefined;
    const o = req.target !== undefined ? obs() : undefined;
    if (o?.ingestScore && req.target !== undefined) {
      ({ score_id } = await o.ingestScore({
        trace_id: req.target,
        name: verdict.name,
        value: verdict.value,
        data_type: verdict.data_type,
        comment: verdict.comment,
        metadata: { evaluator_id: req.evaluator_id, source: 'evaluate' },
      }));
    }
    const score = { ...verdict, ...(score_id ? { score_id } : {}) };
    return {
      evaluator_id: req.evaluator_id,
      target: req.target ?? null,
      placeholder: false,
      results: [
        {
          name: score.name,
          value: score.value,
          data_type: score.data_type,
          explanation: score.comment,
          ...(score_id ? { score_id } : {}),
        },
      ],
      scores: [score],
    };
  }

  const scores = scoreMethods(obs);
  return {
    name,
    type: 'llm_judge',
    kind: 'evaluations',
    capabilities: CAPABILITIES,
    createEvaluator: (req) => evaluators.create(req),
    getEvaluator: (id) => evaluators.get(id),
    listEvaluators: (page) => evaluators.list(page),
    updateEvaluator: (id, patch) => evaluators.update(id, patch),
    deleteEvaluator: (id) => evaluators.delete(id),
    evaluate,
    ...scores,
    async createOnlineConfig(req) {
      attach();
      return online.create(req, async (id) => id in BUILTINS || (await evaluators.get(id)) !== undefined);
    },
    listOnlineConfigs: () => online.list(),
    getOnlineConfig: (id) => online.get(id),
    deleteOnlineConfig: (id) => online.delete(id),
    online: () => ({ stats: { ...online.stats }, drained: () => online.drained() }),
    healthcheck: () => ctx.store.healthcheck(),
    async close() {
      clearInterval(timer);
      online.close();
    },
  };
}

/**
 * `llm_judge`: evaluators judged by an LLM (any llm provider instance), scores
 * recorded through observability, online evaluation of new traces. Configured
 * explicitly (it needs an LLM worth asking), so noop stays the default.
 */
export const llmJudgeEvaluations: ProviderFactory<LlmJudge> = {
  type: 'llm_judge',
  kind: 'evaluations',
  description: 'Evaluations judged by an LLM, with scores in observability and online evaluation',
  create,
};
