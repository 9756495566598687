import { setMaxListeners } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import type { HealthEntry } from './hub.ts';
import { probe, type DiscoveredTool, type ProbeTarget } from './probe.ts';

/** What the checker needs of a registered server; the catalog's repository provides it. */
export interface CheckableServer {
  path: string;
  enabled: boolean;
  /** Changes whenever the record does (its updated_at): a refresh after an edit must not reuse a check of the old record. */
  version: string;
  /** The stored health_status, so a disabled server already recorded as such is not rewritten every sweep. */
  storedStatus: string;
  /** Registered with tool_list_json: those tools stay until discovery finds real ones. */
  manualTools: boolean;
  /**
   * Where to probe and with which headers. A function so the credential is
   * decrypted only when this server's probe starts, and dropped with it.
   */
  target(): Omit<ProbeTarget, 'timeoutMs'>;
  /** The registered proxy_pass_url, judged by the address guard along with the target URL. */
  origin?: string;
  /** The current entry, returned for a disabled server whose record needs no write. */
  entry: HealthEntry;
  /** Disabled by a security scan (security-pending): recorded as unhealthy, not disabled (spec 3). */
  held?: boolean;
}

/** The status a disabled server is recorded with. */
export const disabledStatus = (held: boolean | undefined) => (held ? 'unhealthy: security-pending' : 'disabled');

export interface HealthRecord {
  health_status: string;
  last_checked_iso: string;
  /** Present when discovery found tools; absent keeps whatever tools the server had. */
  tools?: DiscoveredTool[];
  /** How long the probe took; absent when the server was not probed (disabled, refused address). For the history. */
  latency_ms?: number;
}

export interface CheckerDeps {
  /** Paths of every registered server; each is read again when its turn comes, so a long sweep never probes a stale record. */
  paths(): Promise<string[]>;
  server(path: string): Promise<CheckableServer | undefined>;
  save(path: string, record: HealthRecord): Promise<HealthEntry>;
  /** The refused address class (link-local, metadata) one of the URLs reaches, or undefined. */
  blockedAddress?(...urls: Array<string | undefined>): Promise<string | undefined>;
  /**
   * Asked at each periodic tick: false means another replica sweeps this
   * interval (sweep-claim.ts). Absent, every tick sweeps. Refreshes and checks
   * of new servers are never skipped: they run where the request landed.
   */
  claimSweep?(): Promise<boolean>;
  logger: FastifyBaseLogger;
}

export interface CheckerOptions {
  intervalMs: number;
  timeoutMs: number;
  /**
   * Periodic sweeps start their checks evenly over this fraction of the
   * interval instead of all at once: the work of a sweep is spread out so the
   * API keeps its latency while it runs. 0 = as fast as the concurrency allows.
   */
  spread: number;
  /** Probes in flight at once, across sweeps, refreshes and checks of new servers. */
  concurrency: number;
  /** Delays (ms) of the retries of a failed first check (checkNew); none by default. */
  firstCheckRetryMs?: number[];
}

/**
 * Failures a retry may cure (nothing listening yet, a slow start, a 5xx while booting). A refused address or an
 * unreadable credential stays so until someone edits the server, which brings its own check.
 */
const retryable = (status: string) =>
  status.startsWith('unhealthy:') &&
  !status.startsWith('unhealthy: blocked address') &&
  status !== 'unhealthy: credential unreadable';

type Saver = (path: string, record: HealthRecord) => Promise<HealthEntry>;

const SWEEP_FLUSH_MS = 250;

interface Running {
  promise: Promise<HealthEntry>;
  version: string;
}

/**
 * Periodic and on-demand health checks: bounded concurrency, and never two
 * checks of one server at once. A refresh during a check of the same record
 * joins it; a refresh after the record changed (new credential, new URL) waits
 * for the running check and then checks the new record.
 */
export class HealthChecker {
  private readonly inFlight = new Map<string, Running>();
  private readonly slots: Slots;
  private timer?: NodeJS.Timeout;
  private readonly retries = new Set<NodeJS.Timeout>();
  private sweeping?: Promise<void>;
  private stopped = false;
  // Ends the pauses of a paced sweep when the app closes.
  private readonly stopping = new AbortController();

  constructor(
    private readonly deps: CheckerDeps,
    private readonly opts: CheckerOptions,
  ) {
    this.slots = new Slots(opts.concurrency);
    // Every sweep worker may wait on this signal at once.
    setMaxListeners(opts.concurrency + 10, this.stopping.signal);
  }

  start(): void {
    if (this.opts.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      // A sweep still running when the next tick comes is not doubled.
      if (!this.sweeping) {
        const claimed = this.deps.claimSweep ? this.deps.claimSweep() : Promise.resolve(true);
        this.sweeping = claimed
          .then((mine) => (mine ? this.sweep(this.opts.intervalMs * this.opts.spread) : undefined))
          .then(() => undefined)
          .catch((err: Error) => this.deps.logger.warn({ err: err.message }, 'health sweep failed'))
          .finally(() => (this.sweeping = undefined));
      }
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    clearInterval(this.timer);
    for (const r of this.retries) clearTimeout(r);
    this.retries.clear();
    await this.sweeping;
    await Promise.allSettled([...this.inFlight.values()].map((r) => r.promise));
  }

  /**
   * Check every server once; returns each path's new entry. With `spreadMs`,
   * check i starts no earlier than i x spreadMs / servers after the start
   * (periodic sweeps); without, as fast as the slots allow (the on-demand
   * sweep of POST /api/internal/healthcheck).
   */
  async sweep(spreadMs = 0): Promise<Record<string, HealthEntry>> {
    const paths = await this.deps.paths();
    const gap = paths.length ? spreadMs / paths.length : 0;
    const started = Date.now();
    // A sweep's results are written in small batches (every SWEEP_FLUSH_MS): each write makes readers of the
    // catalog rebuild their views (GET /api/servers), and one rebuild per batch beats one per server, while
    // batches small enough keep each burst of writes short for the requests that wait behind it.
    const batch = new SaveBatch((path, record) => this.deps.save(path, record), SWEEP_FLUSH_MS);
    const entries: Array<[string, Promise<HealthEntry>]> = [];
    let next = 0;
    // Only `concurrency` servers are taken from the list at a time, so a refresh queued meanwhile waits behind a few checks, not the whole sweep.
    const worker = async () => {
      while (next < paths.length && !this.stopped) {
        const i = next++;
        const wait = started + i * gap - Date.now();
        if (wait > 0) await pause(wait, this.stopping.signal);
        if (this.stopped) break;
        const s = await this.deps.server(paths[i]);
        if (!s) continue;
        const { entry, probed } = this.check(s, (path, record) => batch.add(path, record));
        entry.catch(noop); // awaited below, once the batch is written
        entries.push([s.path, entry]);
        await probed;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.opts.concurrency, paths.length)) }, worker));
    await batch.flush();
    const results: Record<string, HealthEntry> = {};
    for (const [path, entry] of entries) {
      try {
        results[path] = await entry;
      } catch (err) {
        this.deps.logger.warn({ path, err: (err as Error).message }, 'health check failed to record');
      }
    }
    return results;
  }

  /** Check one server now and write its result at once (refresh endpoints, new servers). */
  async checkPath(path: string): Promise<HealthEntry | undefined> {
    const s = await this.deps.server(path);
    return s ? this.check(s, (p, record) => this.deps.save(p, record)).entry : undefined;
  }

  /**
   * The first check of a server just registered or re-enabled. Such a server is often still starting, so a
   * failure is retried after each of `firstCheckRetryMs` until one check passes, rather than leaving it
   * unhealthy until the next sweep (300 s by default). A retry is dropped when the server is gone, disabled,
   * or no longer failing (a refresh or sweep got there first).
   */
  async checkNew(path: string): Promise<HealthEntry | undefined> {
    const entry = await this.checkPath(path);
    if (entry && retryable(entry.status)) this.retryFirstCheck(path, 0);
    return entry;
  }

  private retryFirstCheck(path: string, attempt: number): void {
    const delays = this.opts.firstCheckRetryMs ?? [];
    if (this.stopped || attempt >= delays.length) return;
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      void (async () => {
        const s = await this.deps.server(path);
        if (this.stopped || !s || !s.enabled || !retryable(s.storedStatus)) return;
        this.deps.logger.info(
          { path, attempt: attempt + 1, of: delays.length },
          'health check retry of a failed first check',
        );
        const entry = await this.check(s, (p, record) => this.deps.save(p, record)).entry;
        if (retryable(entry.status)) this.retryFirstCheck(path, attempt + 1);
      })().catch((err: Error) => this.deps.logger.warn({ path, err: err.message }, 'health check retry failed'));
    }, delays[attempt]);
    timer.unref();
    this.retries.add(timer);
  }

  /**
   * `entry` settles once the result is written; `probed` as soon as the probe
   * is over (a sweep moves on then, its write being batched). The check stays
   * in flight until written, so a later check's result is never overwritten by
   * an earlier one still waiting in a batch.
   */
  private check(s: CheckableServer, save: Saver): { entry: Promise<HealthEntry>; probed: Promise<void> } {
    const running = this.inFlight.get(s.path);
    if (running && running.version === s.version)
      return { entry: running.promise, probed: running.promise.then(noop, noop) };
    const after = running ? running.promise.then(noop, noop) : Promise.resolve();
    let markProbed: () => void = noop;
    const probed = new Promise<void>((resolve) => (markProbed = resolve));
    const promise: Promise<HealthEntry> = after
      .then(() => this.run(s, save, markProbed))
      .finally(() => {
        markProbed();
        if (this.inFlight.get(s.path)?.promise === promise) this.inFlight.delete(s.path);
      });
    this.inFlight.set(s.path, { promise, version: s.version });
    return { entry: promise, probed };
  }

  private async run(s: CheckableServer, save: Saver, probed: () => void): Promise<HealthEntry> {
    if (!s.enabled) {
      probed();
      // Nothing to probe; written once so the stored status says why, then left alone.
      const status = disabledStatus(s.held);
      if (s.storedStatus === status) return s.entry;
      return save(s.path, { health_status: status, last_checked_iso: new Date().toISOString() });
    }
    const release = await this.slots.acquire();
    let record: HealthRecord;
    try {
      record = await this.outcome(s);
    } finally {
      release();
      probed();
    }
    return save(s.path, record);
  }

  /** One probe of an enabled server (inside a slot), or why it was not probed. */
  private async outcome(s: CheckableServer): Promise<HealthRecord> {
    const at = () => new Date().toISOString();
    let target: Omit<ProbeTarget, 'timeoutMs'>;
    try {
      target = s.target();
    } catch (err) {
      // An unreadable stored credential fails this server only, not the sweep.
      this.deps.logger.warn({ path: s.path, err: (err as Error).message }, 'health check');
      return { health_status: 'unhealthy: credential unreadable', last_checked_iso: at() };
    }
    const blocked = await this.deps.blockedAddress?.(s.origin, target.url);
    // Never probed: the address is refused, so the backend is unusable as registered.
    if (blocked) return { health_status: `unhealthy: blocked address (${blocked})`, last_checked_iso: at() };
    const started = performance.now();
    const r = await probe({ ...target, timeoutMs: this.opts.timeoutMs });
    const latency_ms = Math.round(performance.now() - started);
    if (r.reason) this.deps.logger.info({ path: s.path, status: r.status, reason: r.reason }, 'health check');
    const discovered = r.status === 'healthy' && r.tools && !(s.manualTools && r.tools.length === 0);
    return { health_status: r.status, last_checked_iso: at(), tools: discovered ? r.tools : undefined, latency_ms };
  }
}

function noop(): void {}

/** Writes queued results together, `everyMs` after the first of a batch, or on flush(). */
class SaveBatch {
  private queue: Array<{
    path: string;
    record: HealthRecord;
    resolve(e: HealthEntry): void;
    reject(err: unknown): void;
  }> = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly save: Saver,
    private readonly everyMs: number,
  ) {}

  add(path: string, record: HealthRecord): Promise<HealthEntry> {
    return new Promise((resolve, reject) => {
      this.queue.push({ path, record, resolve, reject });
      this.timer ??= setTimeout(() => void this.flush(), this.everyMs);
    });
  }

  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.queue.splice(0);
    await Promise.all(items.map((it) => this.save(it.path, it.record).then(it.resolve, it.reject)));
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** A FIFO counting semaphore: at most `size` holders at once. */
class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async acquire(): Promise<() => void> {
    if (this.used < this.size) this.used++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `used` stays at the bound.
      if (next) next();
      else this.used--;
    };
  }
}
