import type {
  GenerationRecord,
  ObservabilityCapabilities,
  ObservabilityProvider,
  Trace,
} from '../../core/primitives/observability.ts';
import type { ProviderContext, ProviderFactory } from '../../core/provider.ts';
import {
  decodeCursor,
  hitsOf,
  inRange,
  listOf,
  pageOf,
  unwrap,
  wrap,
  type Hit,
  type Page,
  type Stored,
  type Window,
} from './list.ts';
import type { Collection } from '../../core/store-types.ts';
import { startOtlp, type ExportStats, type OtlpExport } from './otlp.ts';
import { moveRecords } from './move-records.ts';
import { eq, holds, matchesAll, sqlListOf, type Match } from './sql-list.ts';
import { openOwnStore, ownFileOf } from './sqlite-writer.ts';
import {
  collectionNamesOf,
  collectionsOf,
  generationOf,
  isoTime,
  logOf,
  scoreOf,
  timeOrderedId,
  traceOf,
} from './records.ts';
import { cutoffOf, RETENTION_DEFAULTS, startSweeper, sweep, type RetentionOptions } from './retention.ts';
import { detailOf, newestFirst, sessionsOf } from './sessions.ts';
import { WRITE_BEHIND_DEFAULTS, WriteBehind, type WriteStats } from './write-behind.ts';

const CAPABILITIES: ObservabilityCapabilities = {
  ingest: true,
  query: true,
  logs: true,
  generations: true,
  scores: true,
  sessions: true,
};

const num = (v: unknown, dflt: number, min = 0): number => (typeof v === 'number' && v >= min ? v : dflt);
/** Query times may come with an offset or without milliseconds; stored ones are canonical UTC. */
const range = (q: { from?: string; to?: string }) => ({
  ...(q.from !== undefined ? { from: isoTime(q.from) } : {}),
  ...(q.to !== undefined ? { to: isoTime(q.to) } : {}),
});

/** What the store provider adds beside the primitive: retention on demand and the export counters for /metrics. */
export interface StoreObservability extends ObservabilityProvider {
  sweep(now?: number): Promise<number>;
  exportStats(): ExportStats | undefined;
  /** The write-behind queue's counters (written, dropped when full, failed after retries, queued). */
  writeStats(): WriteStats;
}

/**
 * A span of kind `generation` in a trace (what auto_trace writes per LLM turn)
 * is also a generation record, so /generations lists it. It is derived when
 * read, not stored twice: a second row per run doubled what auto_trace cost a
 * chat. Its id comes from the trace and span, so re-ingesting the trace
 * replaces it.
 */
export function generationsIn(trace: Trace): GenerationRecord[] {
  return trace.spans.flatMap((s, i) => {
    const meta = (s.metadata ?? {}) as Record<string, unknown>;
    if (meta.type !== 'generation') return [];
    const { type: _type, model, usage, ...rest } = meta;
    return [
      generationOf({
        trace_id: trace.trace_id,
        generation_id: `${trace.trace_id}:${s.span_id ?? i}`,
        name: s.name,
        model: typeof model === 'string' ? model : undefined,
        input: s.input,
        output: s.output,
        usage: (s.usage ?? usage ?? {}) as Record<string, number>,
        metadata: rest,
        start_time: s.start_time,
        end_time: s.end_time ?? trace.timestamp,
      }),
    ];
  });
}

async function create(
  name: string,
  options: Record<string, unknown>,
  ctx: ProviderContext,
): Promise<StoreObservability> {
  // On a SQLite core store: a file of its own, written by a worker thread (sqlite-writer.ts). `own_file: false`
  // keeps the records in the core file, written on the request thread.
  const ownFile = options.own_file === false ? undefined : ownFileOf(ctx.store);
  const own = ownFile ? await openOwnStore(ownFile, ctx.logger) : undefined;
  const cols = collectionsOf(own ?? ctx.store, name);
  const names = collectionNamesOf(name);
  if (own) await moveRecords(collectionsOf(ctx.store, name), collectionsOf(own.store, name), ctx.logger);
  const retention: RetentionOptions = {
    maxAgeDays: num(options.retention_days, RETENTION_DEFAULTS.maxAgeDays),
    maxRecords: num(options.max_records, RETENTION_DEFAULTS.maxRecords, 1),
    intervalMs: num(options.sweep_interval_ms, RETENTION_DEFAULTS.intervalMs),
  };
  const writes = new WriteBehind(
    {
      maxQueue: num(options.write_queue_size, WRITE_BEHIND_DEFAULTS.maxQueue, 1),
      batchSize: num(options.write_batch_size, WRITE_BEHIND_DEFAULTS.batchSize, 1),
      delayMs: num(options.write_delay_ms, WRITE_BEHIND_DEFAULTS.delayMs, 1),
      maxRetries: num(options.write_retries, WRITE_BEHIND_DEFAULTS.maxRetries),
    },
    ctx.logger,
  );
  // A scan (list, sessions, retention) reads the store: what is queued goes there first.
  const flushed = () => writes.flush();
  /** A list checks its query before it flushes: a request refused for a bad cursor or time writes nothing. */
  const flushedFor = async (q: { cursor?: string; from?: string; to?: string }) => {
    if (q.cursor !== undefined) decodeCursor(q.cursor);
    range(q);
    await flushed();
  };
  // On the own SQLite file the writer thread sweeps in SQL; elsewhere the records are read and deleted here.
  const runSweep = (now = Date.now()) =>
    own
      ? own.sweep(Object.values(names), cutoffOf(retention, now) ?? null, retention.maxRecords)
      : sweep(cols, retention, now);
  const sweeper = startSweeper(runSweep, retention, ctx.logger, flushed);
  /** A filtered, windowed page of one kind: SQL on the writer thread (own file), else a scan here. */
  const listed = <T>(
    col: Collection<Stored<T>>,
    collection: string,
    q: Window,
    matches: Array<Match | undefined>,
  ): Promise<Page<T>> => {
    const w = { ...q, ...range(q) };
    return own ? sqlListOf<T>(own, collection, matches, w) : listOf(col, (v) => matchesAll(v, matches), w);
  };
  const endpoint =
    typeof options.otlp_endpoint === 'string' && options.otlp_endpoint
      ? options.otlp_endpoint
      : process.env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  const otlp: OtlpExport | undefined = endpoint
    ? await startOtlp(
        {
          endpoint,
          maxQueueSize: num(options.otlp_max_queue_size, 2048, 1),
          maxExportBatchSize: num(options.otlp_batch_size, 512, 1),
          scheduledDelayMillis: num(options.otlp_delay_ms, 1000),
          exportTimeoutMillis: num(options.otlp_timeout_ms, 10_000, 1),
          serviceName: typeof options.service_name === 'string' ? options.service_name : 'switchboard',
        },
        ctx.logger,
      )
    : undefined;
  const listeners = new Set<(t: Trace) => void>();
  const announce = (trace: Trace) => {
    for (const l of listeners)
      queueMicrotask(() => {
        try {
          l(trace);
        } catch (err) {
          ctx.logger?.warn({ err }, 'observability trace listener failed');
        }
      });
  };
  // Export must never fail an ingest: the SDK queues, and anything it throws is logged.
  const exporting = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      ctx.logger?.warn({ err }, 'OTLP export skipped a record');
    }
  };

  return {
    name,
    type: 'store',
    kind: 'observability',
    capabilities: CAPABILITIES,
    async ingestTrace(input) {
      // Export and listeners (online evaluation) want the trace now, as it was sent: made at once for them.
      if (otlp || listeners.size > 0) {
        const trace = traceOf(input);
        writes.enqueue(cols.traces, trace.trace_id, wrap(trace));
        if (otlp) exporting(() => otlp.exportTrace(trace));
        announce(trace);
        return { trace_id: trace.trace_id, status: 'accepted' };
      }
      // Otherwise the record and its JSON are made when its batch is written (or first read), not in the request
      // that sent it: per request they were most of what auto_trace cost a chat (bench/RESULTS.md). The id and
      // the time are fixed now.
      const trace_id = input.trace_id ?? timeOrderedId();
      // A given time is checked here, so a bad one fails this call, not the batch.
      const at = input.timestamp !== undefined ? isoTime(input.timestamp) : Date.now();
      writes.enqueue(cols.traces, trace_id, () => wrap(traceOf({ ...input, trace_id }, at)));
      return { trace_id, status: 'accepted' };
    },
    async getTrace(id) {
      const s = writes.peek(cols.traces, id) ?? (await cols.traces.get(id));
      return s && unwrap(s);
    },
    async updateTrace(id, update) {
      const stored = writes.peek(cols.traces, id) ?? (await cols.traces.get(id));
      if (!stored) return undefined;
      const cur = unwrap(stored);
      const { metadata, tags, ...fields } = update;
      const next: Trace = {
        ...cur,
        ...fields,
        ...(tags ? { tags } : {}),
        metadata: { ...cur.metadata, ...(metadata ?? {}) },
      };
      writes.enqueue(cols.traces, id, wrap(next, stored.seq));
      return next;
    },
    async listTraces(q) {
      await flushedFor(q);
      const page = await listed(cols.traces, names.traces, q, [
        eq('$.user_id', q.user_id),
        eq('$.session_id', q.session_id),
        eq('$.name', q.name),
        holds('$.tags', q.tag),
      ]);
      return { traces: page.items, total: page.total, next_cursor: page.next_cursor };
    },
    async ingestLog(input) {
      const entry = logOf(input);
      writes.enqueue(cols.logs, entry.log_id, wrap(entry));
      return entry;
    },
    async listLogs(q) {
      await flushedFor(q);
      const page = await listed(cols.logs, names.logs, q, [eq('$.trace_id', q.trace_id), eq('$.level', q.level)]);
      return { logs: page.items, total: page.total, next_cursor: page.next_cursor };
    },
    async ingestGeneration(input) {
      const gen = generationOf(input);
      writes.enqueue(cols.generations, gen.generation_id, wrap(gen));
      if (otlp) exporting(() => otlp.exportGeneration(gen));
      return gen;
    },
    async listGenerations(q) {
      await flushedFor(q);
      const w = { ...q, ...range(q) };
      const keep = (g: GenerationRecord) =>
        (q.trace_id === undefined || g.trace_id === q.trace_id) && (q.model === undefined || g.model === q.model);
      const hits: Hit<GenerationRecord>[] = await hitsOf(cols.generations, keep, w);
      // Plus the generation spans of traces: of the one trace asked for, or of every trace.
      const derived = (stored: Stored<Trace>) => {
        for (const [i, g] of generationsIn(unwrap(stored)).entries())
          if (inRange(g.timestamp, w) && keep(g)) hits.push({ v: g, k: [g.timestamp, `${stored.seq}:${i}`] });
      };
      if (q.trace_id !== undefined) {
        const stored = await cols.traces.get(q.trace_id);
        if (stored) derived(stored);
      } else for await (const [, stored] of cols.traces.entries()) derived(stored);
      const page = pageOf(hits, w);
      return { generations: page.items, total: page.total, next_cursor: page.next_cursor };
    },
    async ingestScore(input) {
      const score = scoreOf(input);
      writes.enqueue(cols.scores, score.score_id, wrap(score));
      return score;
    },
    async listScores(q) {
      await flushedFor(q);
      const page = await listed(cols.scores, names.scores, q, [
        eq('$.trace_id', q.trace_id),
        eq('$.name', q.name),
        eq('$.data_type', q.data_type),
        eq('$.metadata.config_id', q.config_id),
      ]);
      return { scores: page.items, total: page.total, next_cursor: page.next_cursor };
    },
    async getScore(id) {
      const s = writes.peek(cols.scores, id) ?? (await cols.scores.get(id));
      return s && unwrap(s);
    },
    async deleteScore(id) {
      await flushed(); // a queued score must not land after its delete
      return cols.scores.delete(id);
    },
    async listSessions(q) {
      await flushed();
      const all = newestFirst((await sessionsOf(cols, q.user_id)).values());
      return { sessions: all.slice(q.offset, q.offset + q.limit), total: all.length };
    },
    async getSession(id) {
      await flushed();
      const entry = (await sessionsOf(cols, undefined, id)).get(id);
      return entry && detailOf(entry);
    },
    onTrace(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async flush() {
      await flushed();
      await otlp?.flush();
    },
    sweep: async (now) => {
      await flushed();
      return runSweep(now);
    },
    exportStats: () => otlp?.stats(),
    writeStats: () => writes.writeStats(),
    // The store answers for itself: this provider is as healthy as the store it writes to.
    healthcheck: () => (own ?? ctx).store.healthcheck(),
    async close() {
      listeners.clear();
      await sweeper.stop();
      // Before the store closes (the app closes providers first): a trace written just now survives a restart.
      await writes.close();
      await own?.release();
      await otlp?.close().catch(() => undefined);
    },
  };
}

/**
 * `store`: observability in the core store (SQLite under DATA_DIR, Redis with
 * REDIS_URL, memory in tests). It needs no outside engine, so its auto
 * instance replaces noop as the default.
 */
export const storeObservability: ProviderFactory<StoreObservability> = {
  type: 'store',
  kind: 'observability',
  autoInstance: true,
  description: 'Traces, logs, generations and scores in the core store, with retention and optional OTLP export',
  enginePresent: () => true,
  create,
};
