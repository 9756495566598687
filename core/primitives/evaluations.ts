import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** Spec 8: evaluator list `max_results` defaults to 100; paging by opaque `next_token`. */
export const EvaluatorPageQuery = Type.Object({
  max_results: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  next_token: Type.Optional(Type.String({ minLength: 1, description: 'Opaque token from the previous page' })),
});
export type EvaluatorPageQuery = Static<typeof EvaluatorPageQuery>;

/** Spec 2.6. `evaluator_type` values depend on the backend (capability `evaluator_types`). */
export const Evaluator = Type.Object({
  evaluator_id: Type.String(),
  name: Type.String(),
  evaluator_type: Type.String(),
  config: JsonObject,
  description: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type Evaluator = Static<typeof Evaluator>;

export const CreateEvaluatorRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    evaluator_type: Type.String({ minLength: 1, maxLength: 128 }),
    config: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
    description: Type.String({ default: '', maxLength: 4096 }),
  },
  { additionalProperties: false },
);
export type CreateEvaluatorRequest = Static<typeof CreateEvaluatorRequest>;

export const UpdateEvaluatorRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    evaluator_type: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    config: Type.Optional(JsonObject),
    description: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateEvaluatorRequest = Static<typeof UpdateEvaluatorRequest>;

export const EvaluatorList = Type.Object({
  evaluators: Type.Array(Evaluator),
  next_token: Type.Union([Type.String(), Type.Null()]),
});
export type EvaluatorList = Static<typeof EvaluatorList>;

/** Spec 2.6 evaluate request. */
export const EvaluateRequest = Type.Object(
  {
    evaluator_id: Type.String({ minLength: 1, description: 'Evaluator ID or score name' }),
    target: Type.Optional(Type.String({ description: 'Trace ID' })),
    input_data: Type.Optional(Type.String()),
    output_data: Type.Optional(Type.String()),
    expected_output: Type.Optional(Type.String()),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: '`value` sets the score on the score-recording backend',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EvaluateRequest = Static<typeof EvaluateRequest>;

export const ScoreDataType = Type.Union([
  Type.Literal('NUMERIC'),
  Type.Literal('BOOLEAN'),
  Type.Literal('CATEGORICAL'),
]);
export type ScoreDataType = Static<typeof ScoreDataType>;
const ScoreValue = Type.Union([Type.Number(), Type.String()], {
  description: 'Numeric for NUMERIC/BOOLEAN, string for CATEGORICAL',
});

/** One computed (or recorded) result of an evaluation. */
export const EvaluationResult = Type.Object({
  name: Type.String(),
  value: Type.Union([Type.Number(), Type.String(), Type.Null()]),
  data_type: Type.Optional(ScoreDataType),
  explanation: Type.String(),
  score_id: Type.Optional(Type.String({ description: 'Set when the backend recorded a score' })),
});
export type EvaluationResult = Static<typeof EvaluationResult>;

/** A judged score in the shape the reference's clients read (`comment` is the judge's reasoning). */
export const EvaluatedScore = Type.Object({
  name: Type.String(),
  value: Type.Union([Type.Number(), Type.String()]),
  data_type: ScoreDataType,
  comment: Type.String(),
  score_id: Type.Optional(Type.String({ description: 'Set when the score was recorded on the target trace' })),
});
export type EvaluatedScore = Static<typeof EvaluatedScore>;

export const EvaluateResponse = Type.Object({
  evaluator_id: Type.String(),
  target: Type.Union([Type.String(), Type.Null()]),
  results: Type.Array(EvaluationResult),
  /** Set by providers that really judge (llm_judge): the same verdicts as `results`. */
  scores: Type.Optional(Type.Array(EvaluatedScore)),
  /** True when nothing was really judged (noop): clients must not read the value as a verdict. */
  placeholder: Type.Boolean(),
});
export type EvaluateResponse = Static<typeof EvaluateResponse>;

/** Spec 2.6 score request. */
export const ScoreRequest = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    value: ScoreValue,
    trace_id: Type.Optional(Type.String()),
    observation_id: Type.Optional(Type.String()),
    comment: Type.Optional(Type.String()),
    data_type: Type.Optional(ScoreDataType),
    config_id: Type.Optional(Type.String()),
    metadata: Type.Optional(JsonObject),
  },
  { additionalProperties: false },
);
export type ScoreRequest = Static<typeof ScoreRequest>;

export const Score = Type.Object({
  score_id: Type.String(),
  name: Type.String(),
  value: ScoreValue,
  trace_id: Type.Union([Type.String(), Type.Null()]),
  observation_id: Type.Union([Type.String(), Type.Null()]),
  comment: Type.Union([Type.String(), Type.Null()]),
  data_type: Type.Union([ScoreDataType, Type.Null()]),
  config_id: Type.Union([Type.String(), Type.Null()]),
  metadata: JsonObject,
  created_at: Type.String({ format: 'date-time' }),
});
export type Score = Static<typeof Score>;

export const ScoreQuery = Type.Object({
  trace_id: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  config_id: Type.Optional(Type.String()),
  data_type: Type.Optional(ScoreDataType),
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
});
export type ScoreQuery = Static<typeof ScoreQuery>;

export const ScoreList = Type.Object({
  scores: Type.Array(Score),
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
});
export type ScoreList = Static<typeof ScoreList>;

/** Which new traces an online config considers (every field optional; all given must match). */
export const OnlineFilter = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'Trace name, exactly (e.g. agent:helper)' })),
    tag: Type.Optional(Type.String({ description: 'A tag the trace carries' })),
    user_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type OnlineFilter = Static<typeof OnlineFilter>;

/** Online evaluation (managed-cloud only): sample live traces and judge them continuously. */
export const OnlineConfigRequest = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    evaluator_ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    sampling_rate: Type.Number({ minimum: 0, maximum: 1, default: 1 }),
    description: Type.String({ default: '' }),
    config: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
    filter: Type.Optional(OnlineFilter),
  },
  { additionalProperties: false },
);
export type OnlineConfigRequest = Static<typeof OnlineConfigRequest>;

export const OnlineConfig = Type.Object({
  config_id: Type.String(),
  name: Type.String(),
  evaluator_ids: Type.Array(Type.String()),
  sampling_rate: Type.Number(),
  description: Type.String(),
  config: JsonObject,
  filter: Type.Optional(OnlineFilter),
  status: Type.String(),
  created_at: Type.String(),
});
export type OnlineConfig = Static<typeof OnlineConfig>;

export const OnlineConfigList = Type.Object({ configs: Type.Array(OnlineConfig) });
export type OnlineConfigList = Static<typeof OnlineConfigList>;

export interface EvaluationsCapabilities {
  evaluators: boolean;
  evaluate: boolean;
  /** `'any'` or the accepted evaluator_type values (spec 2.6 lists them per backend). */
  evaluator_types: 'any' | readonly string[];
  /** Score endpoints (score-recording backend only). */
  scores: boolean;
  /** Online evaluation configs (managed-cloud backend only). */
  online_configs: boolean;
  [k: string]: boolean | string | readonly string[];
}

/**
 * The evaluations primitive. Unknown ids answer `undefined`/`false` and the
 * plugin answers 404. Score and online-config methods exist only where the
 * matching capability is true; the plugin refuses with 501 before calling.
 */
export interface EvaluationsProvider extends ProviderBase {
  readonly kind: 'evaluations';
  readonly capabilities: EvaluationsCapabilities;
  createEvaluator(req: CreateEvaluatorRequest): Promise<Evaluator>;
  getEvaluator(evaluatorId: string): Promise<Evaluator | undefined>;
  listEvaluators(page: EvaluatorPageQuery): Promise<EvaluatorList>;
  updateEvaluator(evaluatorId: string, patch: UpdateEvaluatorRequest): Promise<Evaluator | undefined>;
  deleteEvaluator(evaluatorId: string): Promise<boolean>;
  evaluate(req: EvaluateRequest): Promise<EvaluateResponse>;
  createScore?(req: ScoreRequest): Promise<Score>;
  listScores?(query: ScoreQuery): Promise<ScoreList>;
  getScore?(scoreId: string): Promise<Score | undefined>;
  deleteScore?(scoreId: string): Promise<boolean>;
  createOnlineConfig?(req: OnlineConfigRequest): Promise<OnlineConfig>;
  listOnlineConfigs?(): Promise<OnlineConfigList>;
  getOnlineConfig?(configId: string): Promise<OnlineConfig | undefined>;
  deleteOnlineConfig?(configId: string): Promise<boolean>;
}
