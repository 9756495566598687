import type { FastifyBaseLogger } from 'fastify';
import type { Collection } from '../../core/store-types.ts';
import type { Stored } from './list.ts';
import type { Collections } from './records.ts';

export interface RetentionOptions {
  /** Records older than this are deleted (days; 0 keeps them regardless of age). */
  maxAgeDays: number;
  /** Per kind (traces, logs, generations, scores): beyond this many, the oldest are deleted. */
  maxRecords: number;
  /** How often the sweep runs (ms; 0: never on its own, only when `sweep()` is called). */
  intervalMs: number;
}

export const RETENTION_DEFAULTS: RetentionOptions = { maxAgeDays: 30, maxRecords: 100_000, intervalMs: 60_000 };

/** Records stamped before this time are too old (undefined: no age limit). */
export const cutoffOf = (opts: RetentionOptions, now: number): string | undefined =>
  opts.maxAgeDays > 0 ? new Date(now - opts.maxAgeDays * 86_400_000).toISOString() : undefined;

/** One kind: drop what is too old, then the oldest beyond the count. Answers how many were deleted. */
async function sweepOne<T>(col: Collection<Stored<T>>, opts: RetentionOptions, now: number): Promise<number> {
  const cutoff = cutoffOf(opts, now);
  const keep: Array<{ key: string; t: string; seq: string }> = [];
  let deleted = 0;
  for await (const [key, s] of col.entries()) {
    const t = s.t;
    if (cutoff !== undefined && t < cutoff) {
      if (await col.delete(key)) deleted++;
    } else keep.push({ key, t, seq: s.seq });
  }
  if (keep.length > opts.maxRecords) {
    keep.sort((a, b) => b.t.localeCompare(a.t) || b.seq.localeCompare(a.seq));
    for (const { key } of keep.slice(opts.maxRecords)) if (await col.delete(key)) deleted++;
  }
  return deleted;
}

export async function sweep(cols: Collections, opts: RetentionOptions, now = Date.now()): Promise<number> {
  let n = 0;
  for (const col of [cols.traces, cols.logs, cols.generations, cols.scores] as Array<Collection<Stored<unknown>>>)
    n += await sweepOne(col, opts, now);
  return n;
}

/**
 * The periodic sweep. The timer is unref'd (it never keeps a process alive) and
 * a sweep never overlaps the previous one; a failing store is logged and tried
 * again next time, never thrown into a request.
 */
export function startSweeper(
  /** One sweep: sweep() below, or the SQLite writer thread's (sqlite-writer.ts). */
  run: () => Promise<number>,
  opts: RetentionOptions,
  logger: FastifyBaseLogger | undefined,
  /** Writes what is queued (write-behind.ts) first, so a queued record is counted and aged like the rest. */
  flushed: () => Promise<void> = async () => undefined,
) {
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = flushed()
      .then(run)
      .then((n) => {
        if (n > 0) logger?.debug({ deleted: n }, 'observability retention sweep');
      })
      .catch((err: unknown) => logger?.warn({ err }, 'observability retention sweep failed; retrying next interval'))
      .finally(() => (running = undefined));
  };
  const timer = opts.intervalMs > 0 ? setInterval(tick, opts.intervalMs) : undefined;
  timer?.unref();
  return {
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
