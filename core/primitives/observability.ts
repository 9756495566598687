import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

const JsonObject = Type.Record(Type.String(), Type.Unknown());
const Id = Type.String({ minLength: 1, maxLength: 256 });

/** A step inside a trace (an LLM call, a tool call); the shape is open so backends keep their fields. */
export const Span = Type.Object(
  {
    span_id: Type.Optional(Type.String()),
    name: Type.String({ minLength: 1 }),
    start_time: Type.Optional(Type.String()),
    end_time: Type.Optional(Type.String()),
    input: Type.Optional(Type.Unknown()),
    output: Type.Optional(Type.Unknown()),
    metadata: Type.Optional(JsonObject),
    /** Token counts of a generation span (`input_tokens`/`output_tokens`, GenAI names). */
    usage: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true },
);
export type Span = Static<typeof Span>;

/** ANCHOR-FACTS: traces `{trace_id, name, user_id, session_id, input, output, tags, spans, metadata}`. */
export const TraceInput = Type.Object(
  {
    trace_id: Type.Optional(Id),
    name: Type.String({ default: '' }),
    user_id: Type.Optional(Type.String()),
    session_id: Type.Optional(Type.String()),
    input: Type.Optional(Type.Unknown()),
    output: Type.Optional(Type.Unknown()),
    tags: Type.Array(Type.String(), { default: [] }),
    spans: Type.Array(Span, { default: [] }),
    metadata: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
    timestamp: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);
export type TraceInput = Static<typeof TraceInput>;

export const Trace = Type.Object({
  trace_id: Type.String(),
  name: Type.String(),
  user_id: Type.Union([Type.String(), Type.Null()]),
  session_id: Type.Union([Type.String(), Type.Null()]),
  input: Type.Unknown(),
  output: Type.Unknown(),
  tags: Type.Array(Type.String()),
  spans: Type.Array(Span),
  metadata: JsonObject,
  timestamp: Type.String(),
});
export type Trace = Static<typeof Trace>;

/** Fields of a trace a client may change after ingest (the reference client's update_trace); absent fields stay. */
export const TraceUpdate = Type.Object(
  {
    name: Type.Optional(Type.String()),
    user_id: Type.Optional(Type.String()),
    session_id: Type.Optional(Type.String()),
    input: Type.Optional(Type.Unknown()),
    output: Type.Optional(Type.Unknown()),
    tags: Type.Optional(Type.Array(Type.String())),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'Merged into the stored metadata' }),
    ),
  },
  { additionalProperties: false },
);
export type TraceUpdate = Static<typeof TraceUpdate>;

export const TraceAccepted = Type.Object({ trace_id: Type.String(), status: Type.Literal('accepted') });
export type TraceAccepted = Static<typeof TraceAccepted>;
/** Ingest answers 202 with the id only: real backends store asynchronously. */
export const LogAccepted = Type.Object({ log_id: Type.String(), status: Type.Literal('accepted') });
export const GenerationAccepted = Type.Object({ generation_id: Type.String(), status: Type.Literal('accepted') });
export const ScoreAccepted = Type.Object({ score_id: Type.String(), status: Type.Literal('accepted') });

const Limit = Type.Integer({ minimum: 1, maximum: 500, default: 50 });
const Offset = Type.Integer({ minimum: 0, default: 0 });
/**
 * Time range and cursor paging, on every list. A provider that keeps records in a store answers
 * `next_cursor`; with `cursor` given, `offset` is ignored (a cursor stays right while new records arrive).
 */
const Window = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Only records at or after this time' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Only records before this time' })),
  cursor: Type.Optional(Type.String({ minLength: 1, description: 'next_cursor of the previous page' })),
};
const NextCursor = Type.Optional(
  Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next page; null on the last' }),
);

export const TraceQuery = Type.Object({
  user_id: Type.Optional(Type.String()),
  session_id: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  tag: Type.Optional(Type.String({ description: 'Only traces carrying this tag' })),
  limit: Limit,
  offset: Offset,
  ...Window,
});
export type TraceQuery = Static<typeof TraceQuery>;
export const TraceList = Type.Object({ traces: Type.Array(Trace), total: Type.Integer(), next_cursor: NextCursor });
export type TraceList = Static<typeof TraceList>;

export const LogLevel = Type.Union(['debug', 'info', 'warning', 'error'].map((l) => Type.Literal(l)));
export const LogInput = Type.Object(
  {
    message: Type.String({ minLength: 1 }),
    level: Type.Union(
      ['debug', 'info', 'warning', 'error'].map((l) => Type.Literal(l)),
      { default: 'info' },
    ),
    trace_id: Type.Optional(Id),
    metadata: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
    timestamp: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);
export type LogInput = Static<typeof LogInput>;
export const LogEntry = Type.Object({
  log_id: Type.String(),
  message: Type.String(),
  level: Type.String(),
  trace_id: Type.Union([Type.String(), Type.Null()]),
  metadata: JsonObject,
  timestamp: Type.String(),
});
export type LogEntry = Static<typeof LogEntry>;
export const LogQuery = Type.Object({
  trace_id: Type.Optional(Type.String()),
  level: Type.Optional(LogLevel),
  limit: Limit,
  offset: Offset,
  ...Window,
});
export type LogQuery = Static<typeof LogQuery>;
export const LogList = Type.Object({ logs: Type.Array(LogEntry), total: Type.Integer(), next_cursor: NextCursor });
export type LogList = Static<typeof LogList>;

const Usage = Type.Object(
  {
    prompt_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
    completion_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: true },
);

/** An LLM call inside a trace. */
export const GenerationInput = Type.Object(
  {
    trace_id: Id,
    generation_id: Type.Optional(Id),
    name: Type.String({ default: 'generation' }),
    model: Type.Optional(Type.String()),
    input: Type.Optional(Type.Unknown()),
    output: Type.Optional(Type.Unknown()),
    usage: Type.Optional(Usage),
    metadata: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
    start_time: Type.Optional(Type.String({ format: 'date-time' })),
    end_time: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);
export type GenerationInput = Static<typeof GenerationInput>;
export const GenerationRecord = Type.Object({
  generation_id: Type.String(),
  trace_id: Type.String(),
  name: Type.String(),
  model: Type.Union([Type.String(), Type.Null()]),
  input: Type.Unknown(),
  output: Type.Unknown(),
  usage: Type.Record(Type.String(), Type.Unknown()),
  metadata: JsonObject,
  start_time: Type.Union([Type.String(), Type.Null()]),
  end_time: Type.Union([Type.String(), Type.Null()]),
  timestamp: Type.String(),
});
export type GenerationRecord = Static<typeof GenerationRecord>;
export const GenerationQuery = Type.Object({
  trace_id: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  limit: Limit,
  offset: Offset,
  ...Window,
});
export type GenerationQuery = Static<typeof GenerationQuery>;
export const GenerationRecordList = Type.Object({
  generations: Type.Array(GenerationRecord),
  total: Type.Integer(),
  next_cursor: NextCursor,
});
export type GenerationRecordList = Static<typeof GenerationRecordList>;

const DataType = Type.Union([Type.Literal('NUMERIC'), Type.Literal('BOOLEAN'), Type.Literal('CATEGORICAL')]);
/** A score attached to a trace (what the observability backend records; spec 2.6 fields). */
export const TraceScoreInput = Type.Object(
  {
    trace_id: Id,
    name: Type.String({ minLength: 1 }),
    value: Type.Union([Type.Number(), Type.String()]),
    observation_id: Type.Optional(Type.String()),
    comment: Type.Optional(Type.String()),
    data_type: Type.Optional(DataType),
    metadata: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  },
  { additionalProperties: false },
);
export type TraceScoreInput = Static<typeof TraceScoreInput>;
export const TraceScore = Type.Object({
  score_id: Type.String(),
  trace_id: Type.String(),
  name: Type.String(),
  value: Type.Union([Type.Number(), Type.String()]),
  observation_id: Type.Union([Type.String(), Type.Null()]),
  comment: Type.Union([Type.String(), Type.Null()]),
  data_type: Type.Union([DataType, Type.Null()]),
  metadata: JsonObject,
  timestamp: Type.String(),
});
export type TraceScore = Static<typeof TraceScore>;
export const TraceScoreQuery = Type.Object({
  trace_id: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  data_type: Type.Optional(DataType),
  config_id: Type.Optional(
    Type.String({ description: 'Scores whose metadata.config_id is this (set by evaluations)' }),
  ),
  limit: Limit,
  offset: Offset,
  ...Window,
});
export type TraceScoreQuery = Static<typeof TraceScoreQuery>;
export const TraceScoreList = Type.Object({
  scores: Type.Array(TraceScore),
  total: Type.Integer(),
  next_cursor: NextCursor,
});
export type TraceScoreList = Static<typeof TraceScoreList>;

/** Sessions are derived from traces that carry a session_id. */
export const SessionSummary = Type.Object({
  session_id: Type.String(),
  user_id: Type.Union([Type.String(), Type.Null()]),
  trace_count: Type.Integer(),
  first_seen: Type.String(),
  last_activity: Type.String(),
  total_tokens: Type.Optional(
    Type.Integer({ description: 'Input plus output tokens of the generations of its traces' }),
  ),
});
export type SessionSummary = Static<typeof SessionSummary>;
export const SessionQuery = Type.Object({ user_id: Type.Optional(Type.String()), limit: Limit, offset: Offset });
export type SessionQuery = Static<typeof SessionQuery>;
export const SessionList = Type.Object({ sessions: Type.Array(SessionSummary), total: Type.Integer() });
export type SessionList = Static<typeof SessionList>;
export const SessionDetail = Type.Object({ session: SessionSummary, traces: Type.Array(Trace) });
export type SessionDetail = Static<typeof SessionDetail>;

export interface ObservabilityCapabilities {
  /** Accept traces, logs, generations and scores. */
  ingest: boolean;
  /** Read traces back (get and list); an export-only backend has this false. */
  query: boolean;
  logs: boolean;
  generations: boolean;
  scores: boolean;
  sessions: boolean;
  [k: string]: boolean | string | readonly string[];
}

/**
 * The observability primitive. `ingestTrace` is also what the agent runtime
 * calls for `auto_trace`: it takes the whole trace (trace_id optional) and
 * answers the id it was stored under. Read methods answer `undefined` for an
 * unknown id; the plugin answers 404.
 */
export interface ObservabilityProvider extends ProviderBase {
  readonly kind: 'observability';
  readonly capabilities: ObservabilityCapabilities;
  ingestTrace(trace: Partial<TraceInput>): Promise<TraceAccepted>;
  getTrace?(traceId: string): Promise<Trace | undefined>;
  /** Change a stored trace; `undefined` for an unknown id. */
  updateTrace?(traceId: string, update: TraceUpdate): Promise<Trace | undefined>;
  /**
   * Send what is buffered to the backend now. Providers that write at ingest
   * (nothing buffered) leave it out; flushing them is complete at once.
   */
  flush?(): Promise<void>;
  listTraces?(query: TraceQuery): Promise<TraceList>;
  ingestLog?(log: LogInput): Promise<Pick<LogEntry, 'log_id'>>;
  listLogs?(query: LogQuery): Promise<LogList>;
  ingestGeneration?(gen: GenerationInput): Promise<Pick<GenerationRecord, 'generation_id'>>;
  listGenerations?(query: GenerationQuery): Promise<GenerationRecordList>;
  ingestScore?(score: TraceScoreInput): Promise<Pick<TraceScore, 'score_id'>>;
  listScores?(query: TraceScoreQuery): Promise<TraceScoreList>;
  getScore?(scoreId: string): Promise<TraceScore | undefined>;
  deleteScore?(scoreId: string): Promise<boolean>;
  /**
   * Called once per trace this instance stores from now on (online evaluation listens here).
   * Answers the function that stops listening.
   */
  onTrace?(listener: (trace: Trace) => void): () => void;
  listSessions?(query: SessionQuery): Promise<SessionList>;
  getSession?(sessionId: string): Promise<SessionDetail | undefined>;
}
