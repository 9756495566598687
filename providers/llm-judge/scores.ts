import { notImplemented, unprocessable } from '../../core/errors.ts';
import type { Score, ScoreList, ScoreQuery, ScoreRequest } from '../../core/primitives/evaluations.ts';
import type { ObservabilityProvider, TraceScore } from '../../core/primitives/observability.ts';

/**
 * Evaluation scores live in observability (the score-recording backend), so
 * /evaluations/scores and /observability/scores show the same records. A score
 * without a trace is stored under trace_id '' and read back as null.
 */
export function scoreFromTrace(s: TraceScore): Score {
  const { config_id, ...metadata } = s.metadata;
  return {
    score_id: s.score_id,
    name: s.name,
    value: s.value,
    trace_id: s.trace_id || null,
    observation_id: s.observation_id,
    comment: s.comment,
    data_type: s.data_type,
    config_id: typeof config_id === 'string' ? config_id : null,
    metadata,
    created_at: s.timestamp,
  };
}

/** The same rule as the store: NUMERIC and BOOLEAN take numbers, CATEGORICAL strings (422 otherwise). */
export function checkValue(req: Pick<ScoreRequest, 'value' | 'data_type'>): void {
  const { value, data_type } = req;
  if ((data_type === 'NUMERIC' || data_type === 'BOOLEAN') && typeof value !== 'number')
    throw unprocessable(
      'SB_ERR_EVALUATIONS_SCORE_VALUE',
      `Score value ${JSON.stringify(value)} is a string; a ${data_type} score needs a number`,
    );
  if (data_type === 'CATEGORICAL' && typeof value !== 'string')
    throw unprocessable(
      'SB_ERR_EVALUATIONS_SCORE_VALUE',
      `Score value ${value} is a number; a CATEGORICAL score needs a string category`,
    );
}

type Need = <K extends keyof ObservabilityProvider>(
  method: K,
) => NonNullable<ObservabilityProvider[K]> extends (...a: infer A) => infer R ? (...a: A) => R : never;

export function scoreMethods(obs: () => ObservabilityProvider) {
  const need: Need = ((method: keyof ObservabilityProvider) => {
    const p = obs();
    const fn = p[method];
    if (typeof fn !== 'function')
      throw notImplemented(
        'SB_ERR_EVALUATIONS_SCORES_UNSUPPORTED',
        `Scores are recorded through observability, and the observability provider '${p.name}' cannot ${String(method)}`,
      );
    return (fn as (...a: unknown[]) => unknown).bind(p);
  }) as Need;
  return {
    async createScore(req: ScoreRequest): Promise<Score> {
      checkValue(req);
      // Both methods checked before writing: a backend that cannot read a score back must not half-succeed.
      const ingest = need('ingestScore');
      const read = need('getScore');
      const { score_id } = await ingest({
        trace_id: req.trace_id ?? '',
        name: req.name,
        value: req.value,
        ...(req.observation_id !== undefined ? { observation_id: req.observation_id } : {}),
        ...(req.comment !== undefined ? { comment: req.comment } : {}),
        ...(req.data_type !== undefined ? { data_type: req.data_type } : {}),
        metadata: { ...(req.metadata ?? {}), ...(req.config_id !== undefined ? { config_id: req.config_id } : {}) },
      });
      const stored = await read(score_id);
      return scoreFromTrace(stored!);
    },
    async listScores(q: ScoreQuery): Promise<ScoreList> {
      const list = await need('listScores')({
        ...(q.trace_id !== undefined ? { trace_id: q.trace_id } : {}),
        ...(q.name !== undefined ? { name: q.name } : {}),
        ...(q.data_type !== undefined ? { data_type: q.data_type } : {}),
        ...(q.config_id !== undefined ? { config_id: q.config_id } : {}),
        limit: q.limit,
        offset: (q.page - 1) * q.limit,
      });
      return { scores: list.scores.map(scoreFromTrace), page: q.page, limit: q.limit, total: list.total };
    },
    async getScore(id: string): Promise<Score | undefined> {
      const s = await need('getScore')(id);
      return s && scoreFromTrace(s);
    },
    deleteScore: (id: string): Promise<boolean> => need('deleteScore')(id),
  };
}
