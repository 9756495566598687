import { AsyncResource } from 'node:async_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Collection } from '../../core/store-types.ts';
import type { Stored } from './list.ts';

type Col = Collection<Stored<unknown>> & {
  /**
   * Several entries in one backend call, all or none (keyv's setMany: one transaction on SQLite). The core
   * Collection does not declare it (core/store-types.ts); where a collection has it, batches use it.
   */
  setMany?(entries: Array<{ key: string; value: Stored<unknown> }>): Promise<unknown>;
};
/**
 * A queued value and when it was first queued (a ticket), so flush() knows which records predate it. The value
 * may be queued unmade (`make`): it is made when the batch is written, or when a read asks for it first.
 */
type Entry = { v: Stored<unknown> | undefined; make: (() => Stored<unknown>) | undefined; n: number };

/** The entry's value, made now if it was queued unmade (once: the made value replaces the maker). */
function madeValue(e: Entry): Stored<unknown> {
  if (e.v === undefined) {
    e.v = e.make!();
    e.make = undefined;
  }
  return e.v;
}

export interface WriteBehindOptions {
  /** Records waiting at most; beyond it a new record is dropped (and counted), never waited for. */
  maxQueue: number;
  /** Records written per flush. */
  batchSize: number;
  /** How long a record may wait before a flush starts (ms). */
  delayMs: number;
  /** Failed flushes of one batch before it is dropped (and counted). */
  maxRetries: number;
}

export const WRITE_BEHIND_DEFAULTS: WriteBehindOptions = {
  maxQueue: 10_000,
  batchSize: 256,
  delayMs: 50,
  maxRetries: 5,
};

/** For /metrics: records written, dropped because the queue was full, dropped after failed retries, waiting now. */
export interface WriteStats {
  written: number;
  dropped: number;
  failed: number;
  queued: number;
}

/**
 * Observability writes off the request path. Telemetry is written behind, as
 * OTLP exporters do: an ingest puts the record in a bounded queue and returns,
 * and a flusher writes batches on a short timer or when a batch is full. One
 * record per key is kept (an update of a queued trace replaces it), so the
 * queue never writes a stale value over a newer one.
 *
 * Reads stay consistent: `peek` answers a key from the queue (and from the
 * batch being written), and a scan calls `flush()` first. What a crash can
 * lose is what was queued (at most `maxQueue` records, normally one timer's
 * worth); close() flushes with a bounded wait.
 *
 * A batch is one `setMany` call per collection where the collection offers one
 * (one SQLite transaction: an autocommit per record was most of what auto_trace
 * cost a chat, bench/RESULTS.md), else sequential sets, off the request path.
 */
export class WriteBehind {
  private readonly queue = new Map<Col, Map<string, Entry>>();
  /** The batch being written: still readable through peek until it is in the store. */
  private inflight = new Map<Col, Map<string, Entry>>();
  private tickets = 0;
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;
  private lastError: unknown;
  /** Failed batch writes ever (never reset, unlike `failures`): how flush() and close() notice a failure. */
  private failedWrites = 0;
  private closed = false;
  private readonly stats = { written: 0, dropped: 0, failed: 0 };

  /**
   * The writer's own async context, taken when the provider is built: a batch started by whichever request
   * happened to read or enqueue carries that request's context otherwise, so its writes (other requests'
   * records) would be traced and attributed to it. They belong to the background writer.
   */
  private readonly writer = new AsyncResource('observability-write-behind');

  constructor(
    private readonly opts: WriteBehindOptions,
    private readonly logger: FastifyBaseLogger | undefined,
  ) {}

  /**
   * Queue a write; false when the queue is full and the record was dropped. `value` may be a function that
   * makes it: it is then called when the batch is written (or when a read peeks at the key first), off the
   * request that queued it, so the JSON text of a record is made in a batch, not per request.
   */
  enqueue<T>(col: Collection<Stored<T>>, key: string, value: Stored<T> | (() => Stored<T>)): boolean {
    const c = col as Col;
    let m = this.queue.get(c);
    const had = m?.get(key);
    const replaces = had !== undefined;
    if (!replaces && this.size >= this.opts.maxQueue) {
      this.stats.dropped++;
      return false;
    }
    if (!m) this.queue.set(c, (m = new Map()));
    // A replaced value keeps its place (and ticket): it is written no later than the one it replaces.
    const n = had ? had.n : ++this.tickets;
    m.set(
      key,
      typeof value === 'function'
        ? { v: undefined, make: value as () => Stored<unknown>, n }
        : { v: value as Stored<unknown>, make: undefined, n },
    );
    if (!replaces) this.size++;
    if (this.size >= this.opts.batchSize) this.kick(0);
    else this.kick(this.opts.delayMs);
    return true;
  }

  /** The newest unwritten value of a key, if any. */
  peek<T>(col: Collection<Stored<T>>, key: string): Stored<T> | undefined {
    const c = col as Col;
    const e = this.queue.get(c)?.get(key) ?? this.inflight.get(c)?.get(key);
    if (!e) return undefined;
    try {
      return madeValue(e) as Stored<T>;
    } catch {
      return undefined; // a record that cannot be made is dropped when its batch is written (counted there)
    }
  }

  /** Write everything queued when called (a read that scans wants it in the store first). Throws if the store fails. */
  async flush(): Promise<void> {
    // Until every record queued before this call is written: records queued later never keep it waiting long.
    const upTo = this.tickets;
    while (this.running || this.oldestTicket() <= upTo) {
      const before = this.failedWrites;
      await this.flushOnce();
      // The store's own error (a 503 naming it) is what the read would have met.
      if (this.failedWrites > before) throw this.lastError;
    }
  }

  writeStats(): WriteStats {
    return { ...this.stats, queued: this.size + this.countInflight() };
  }

  /** Stop the timer and flush, waiting at most `waitMs`; what is left is logged as lost. */
  async close(waitMs = 5_000): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    let timeout: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((r) => {
      timeout = setTimeout(() => r('timeout'), waitMs);
    });
    const drained = (async () => {
      while (this.size > 0 || this.running) {
        const before = this.failedWrites;
        await this.flushOnce();
        if (this.failedWrites > before) return; // a store down at close: nothing more to try
      }
    })();
    await Promise.race([drained, deadline]);
    clearTimeout(timeout);
    const lost = this.size + this.countInflight();
    if (lost > 0) {
      this.stats.failed += this.size;
      this.logger?.warn({ lost }, 'observability records not written before close');
    }
  }

  /** Each collection's map is in queueing order, so its first entry is its oldest. */
  private oldestTicket(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const m of this.queue.values()) {
      const first = m.values().next();
      if (!first.done && first.value.n < min) min = first.value.n;
    }
    return min;
  }

  private countInflight(): number {
    let n = 0;
    for (const m of this.inflight.values()) n += m.size;
    return n;
  }

  private kick(wanted: number): void {
    if (this.closed) return;
    // While the store is failing, every flush waits out the backoff, full batch or not.
    const delayMs = this.failures > 0 ? this.retryDelay() : wanted;
    if (delayMs === 0 && !this.running) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      void this.flushOnce();
      return;
    }
    if (this.timer || this.running) return; // a flush is due or running; it reschedules when done
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flushOnce();
    }, delayMs);
    this.timer.unref();
  }

  /** One batch; concurrent callers share the running one. Never throws: failures are counted and retried. */
  private flushOnce(): Promise<void> {
    if (this.running) return this.running;
    if (this.size === 0) return Promise.resolve();
    this.running = this.writer
      .runInAsyncScope(() => this.writeBatch())
      .finally(() => {
        this.running = undefined;
        if (this.size > 0) this.kick(this.size >= this.opts.batchSize ? 0 : this.opts.delayMs);
      });
    return this.running;
  }

  private retryDelay(): number {
    return this.opts.delayMs * 2 ** Math.min(this.failures, 6);
  }

  private takeBatch(): void {
    let left = this.opts.batchSize;
    for (const [col, m] of this.queue) {
      if (left === 0) break;
      const out = new Map<string, Entry>();
      for (const [k, v] of m) {
        if (left === 0) break;
        out.set(k, v);
        m.delete(k);
        left--;
      }
      if (m.size === 0) this.queue.delete(col);
      this.size -= out.size;
      this.inflight.set(col, out);
    }
  }

  /**
   * Make the batch's unmade values. One that cannot be made (its maker threw) is dropped and counted as failed
   * here, so it never fails the batch that carries other records.
   */
  private makeBatch(): void {
    for (const m of this.inflight.values())
      for (const [k, e] of m) {
        if (e.v !== undefined) continue;
        try {
          madeValue(e);
        } catch (err) {
          m.delete(k);
          this.stats.failed++;
          this.logger?.warn({ err, key: k }, 'observability record could not be serialised; dropped');
        }
      }
  }

  private async writeBatch(): Promise<void> {
    this.takeBatch();
    this.makeBatch();
    try {
      for (const [col, m] of this.inflight) {
        if (typeof col.setMany === 'function') {
          const entries: Array<{ key: string; value: Stored<unknown> }> = [];
          for (const [key, e] of m) entries.push({ key, value: e.v! });
          await col.setMany(entries);
          this.stats.written += m.size;
          m.clear(); // written as a whole; on failure all of it stays for the retry
          continue;
        }
        for (const [k, v] of m) {
          await col.set(k, v.v!);
          m.delete(k); // written: a retry must not write it again
          this.stats.written++;
        }
      }
      this.inflight = new Map();
      this.failures = 0;
    } catch (err) {
      this.failures++;
      this.failedWrites++;
      this.lastError = err;
      const left = this.countInflight();
      if (this.failures > this.opts.maxRetries) {
        this.stats.failed += left;
        this.failures = 0;
        this.inflight = new Map();
        this.logger?.warn({ err, dropped: left }, 'observability store writes dropped after retries');
        return;
      }
      // Back to the front of the queue (oldest first, as oldestTicket() expects), unless a newer value of the
      // same key was queued meanwhile.
      for (const [col, m] of this.inflight) {
        const q = this.queue.get(col) ?? new Map<string, Entry>();
        const back = new Map<string, Entry>();
        for (const [k, v] of m)
          if (!q.has(k)) {
            back.set(k, v);
            this.size++;
          }
        for (const [k, v] of q) back.set(k, v);
        if (back.size > 0) this.queue.set(col, back);
      }
      this.inflight = new Map();
      this.logger?.warn(
        { err, queued: this.size, attempt: this.failures },
        'observability store write failed; retrying',
      );
    }
  }
}
