import { unprocessable } from '../../core/errors.ts';
import type {
  GenerationInput,
  GenerationRecord,
  LogEntry,
  LogInput,
  Trace,
  TraceInput,
  TraceScore,
  TraceScoreInput,
} from '../../core/primitives/observability.ts';
import type { Collection, Store } from '../../core/store-types.ts';
import type { Stored } from './list.ts';
import { randomDigits } from './random-pool.ts';

/** The four collections of one instance; the instance name keeps two instances on one store apart. */
export interface Collections {
  traces: Collection<Stored<Trace>>;
  logs: Collection<Stored<LogEntry>>;
  generations: Collection<Stored<GenerationRecord>>;
  scores: Collection<Stored<TraceScore>>;
}

/** The store collection names of one instance's four kinds (the instance name keeps instances apart). */
export const collectionNamesOf = (instance: string): Record<keyof Collections, string> => ({
  traces: `observability:${instance}:traces`,
  logs: `observability:${instance}:logs`,
  generations: `observability:${instance}:generations`,
  scores: `observability:${instance}:scores`,
});

export function collectionsOf(store: Pick<Store, 'collection'>, instance: string): Collections {
  const n = collectionNamesOf(instance);
  return {
    traces: store.collection(n.traces),
    logs: store.collection(n.logs),
    generations: store.collection(n.generations),
    scores: store.collection(n.scores),
  };
}

/** `n` (at most 16) random bytes as hex, from the same pool: OpenTelemetry span ids (8) and trace ids (16). */
export const randomHex = (n: number): string => randomDigits(2 * n);

/** A random hex digit to the variant digit (10xx, RFC 9562) keeping its two low bits. */
const VARIANT: Record<string, string> = {};
for (let d = 0; d < 16; d++) VARIANT[d.toString(16)] = '89ab'[d & 3]!;

let idMs = -1;
let idHead = '';
/**
 * Ids made here are UUIDv7: time-ordered, so a new record's key lands at the
 * end of its collection's range in SQLite's B-tree instead of at a random page
 * (measured: random keys cost twice as much per insert once a collection holds
 * ~15k records). They are still UUIDs, and 32 hex digits for OpenTelemetry.
 * 48 bits of milliseconds, the version digit 7, 12 random bits, the variant
 * digit (2 bits fixed, 2 random), 60 more random bits. The time part is made
 * once per millisecond.
 */
export function timeOrderedId(now = Date.now()): string {
  if (now !== idMs) {
    idMs = now;
    const ms = now.toString(16).padStart(12, '0');
    idHead = `${ms.slice(0, 8)}-${ms.slice(8)}-7`;
  }
  const r = randomDigits(19);
  return `${idHead}${r.slice(0, 3)}-${VARIANT[r[3]!]}${r.slice(4, 7)}-${r.slice(7)}`;
}

/** Timestamps are stored in one form (UTC, milliseconds) so they sort and compare as strings. */
export const isoTime = (t: string | number | undefined): string =>
  (t === undefined ? new Date() : new Date(t)).toISOString();

/** `at`: the time to use when the input has none (an ISO text or epoch milliseconds; default now). */
export function traceOf(input: Partial<TraceInput>, at?: string | number): Trace {
  return {
    trace_id: input.trace_id ?? timeOrderedId(),
    name: input.name ?? '',
    user_id: input.user_id ?? null,
    session_id: input.session_id ?? null,
    input: input.input ?? null,
    output: input.output ?? null,
    tags: [...(input.tags ?? [])],
    spans: input.spans ?? [],
    metadata: input.metadata ?? {},
    timestamp: isoTime(input.timestamp ?? at),
  };
}

export function logOf(input: LogInput): LogEntry {
  return {
    log_id: timeOrderedId(),
    message: input.message,
    level: input.level ?? 'info',
    trace_id: input.trace_id ?? null,
    metadata: input.metadata ?? {},
    timestamp: isoTime(input.timestamp),
  };
}

export function generationOf(input: GenerationInput): GenerationRecord {
  return {
    generation_id: input.generation_id ?? timeOrderedId(),
    trace_id: input.trace_id,
    name: input.name ?? 'generation',
    model: input.model ?? null,
    input: input.input ?? null,
    output: input.output ?? null,
    usage: input.usage ?? {},
    metadata: input.metadata ?? {},
    start_time: input.start_time ?? null,
    end_time: input.end_time ?? null,
    timestamp: isoTime(input.end_time ?? input.start_time),
  };
}

/**
 * A score's value must fit its data type: NUMERIC and BOOLEAN are numbers
 * (BOOLEAN 0 or 1), CATEGORICAL a string. A mismatch is the caller's to fix: 422.
 */
export function checkScoreValue(value: number | string, dataType: TraceScoreInput['data_type']): void {
  const bad = (detail: string) => unprocessable('SB_ERR_OBSERVABILITY_SCORE_VALUE', detail);
  if ((dataType === 'NUMERIC' || dataType === 'BOOLEAN') && typeof value !== 'number')
    throw bad(`Score value ${JSON.stringify(value)} is a string; a ${dataType} score needs a number`);
  if (dataType === 'BOOLEAN' && value !== 0 && value !== 1)
    throw bad(`Score value ${value} is not 0 or 1; a BOOLEAN score is 0 (false) or 1 (true)`);
  if (dataType === 'CATEGORICAL' && typeof value !== 'string')
    throw bad(`Score value ${value} is a number; a CATEGORICAL score needs a string category`);
}

export function scoreOf(input: TraceScoreInput): TraceScore {
  checkScoreValue(input.value, input.data_type);
  return {
    score_id: timeOrderedId(),
    trace_id: input.trace_id,
    name: input.name,
    value: input.value,
    observation_id: input.observation_id ?? null,
    comment: input.comment ?? null,
    data_type: input.data_type ?? null,
    metadata: input.metadata ?? {},
    timestamp: isoTime(undefined),
  };
}

/** Input plus output tokens of a usage record, whichever naming (OpenAI's or GenAI's) it uses. */
export function tokensOf(usage: unknown): number {
  if (!usage || typeof usage !== 'object') return 0;
  const u = usage as Record<string, unknown>;
  const n = (k: string) => (typeof u[k] === 'number' ? (u[k] as number) : 0);
  if (typeof u.total_tokens === 'number') return u.total_tokens;
  return (n('prompt_tokens') || n('input_tokens')) + (n('completion_tokens') || n('output_tokens'));
}
