import { randomFillSync } from 'node:crypto';
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

/** The four collections of one instance; the instance name keeps two instances on one store apart. */
export interface Collections {
  traces: Collection<Stored<Trace>>;
  logs: Collection<Stored<LogEntry>>;
  generations: Collection<Stored<GenerationRecord>>;
  scores: Collection<Stored<TraceScore>>;
}

export function collectionsOf(store: Store, instance: string): Collections {
  const c = <T>(what: string) => store.collection<Stored<T>>(`observability:${instance}:${what}`);
  return { traces: c('traces'), logs: c('logs'), generations: c('generations'), scores: c('scores') };
}

/**
 * Random bytes come from a pool filled 256 ids at a time, as crypto.randomUUID
 * does: one randomBytes(16) call per id was half of what ingesting an agent's
 * trace cost (profiled in the in-process check of bench/RESULTS.md). The pool
 * is still the CSPRNG's output, each byte used once.
 */
const POOL_IDS = 256;
const pool = Buffer.alloc(16 * POOL_IDS);
let poolAt = pool.length;
function randomTail(into: Buffer, n = 16): void {
  if (poolAt + n > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  pool.copy(into, 0, poolAt, poolAt + n);
  poolAt += n;
}

/** `n` (at most 16) random bytes from the same pool as hex: OpenTelemetry span ids (8) and trace ids (16). */
export function randomHex(n: number): string {
  const b = Buffer.allocUnsafe(n);
  randomTail(b, n);
  return b.toString('hex');
}

/**
 * Ids made here are UUIDv7: time-ordered, so a new record's key lands at the
 * end of its collection's range in SQLite's B-tree instead of at a random page
 * (measured: random keys cost twice as much per insert once a collection holds
 * ~15k records). They are still UUIDs, and 32 hex digits for OpenTelemetry.
 */
export function timeOrderedId(now = Date.now()): string {
  const b = Buffer.allocUnsafe(16);
  randomTail(b);
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Timestamps are stored in one form (UTC, milliseconds) so they sort and compare as strings. */
export const isoTime = (t: string | undefined): string => (t === undefined ? new Date() : new Date(t)).toISOString();

export function traceOf(input: Partial<TraceInput>): Trace {
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
    timestamp: isoTime(input.timestamp),
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
