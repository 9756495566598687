import type { Collection, Store } from './store.ts';

/** A re-seed this process did after finding the store emptied. */
export interface Reseed {
  at: string;
  seeds: string[];
}

interface Sentinel {
  at: string;
  /**
   * ms since epoch: when this store's data began (first seeded, or seeded again after it was found emptied).
   * Kept by every later mark, so it changes only with the data: what was recorded in the store before it
   * (a logout, a revocation) is lost, and credentials issued before it are judged by it (epoch()).
   */
  since?: number;
}

interface SeedLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const SENTINEL_COLLECTION = 'switchboard_meta';
export const SENTINEL_KEY = 'seeded';

/**
 * What the process writes into the store at start (the registry's
 * file-defined scopes) must come back when the store comes back empty: a
 * Redis restarted without persistence answers every command, so nothing else
 * would notice that the scopes, and with them the admin's rights, are gone.
 * A sentinel key is written once seeding is done; `check()` (run by /readyz
 * and every few seconds) finds it missing, runs every seed again, writes it
 * back and remembers when, so /readyz can report it.
 */
export class StoreSeeds {
  private readonly seeds = new Map<string, () => Promise<void>>();
  private readonly meta: Collection<Sentinel>;
  private running?: Promise<boolean>;
  private timer?: NodeJS.Timeout;
  /** The last time this process found the store emptied and seeded it again. */
  lastReseed?: Reseed;

  constructor(
    store: Store,
    private readonly log: SeedLogger,
  ) {
    this.meta = store.collection<Sentinel>(SENTINEL_COLLECTION);
  }

  /** Says "this store has been seeded"; a store that loses it has lost everything else too. */
  async mark(): Promise<void> {
    const since = (await this.meta.get(SENTINEL_KEY))?.since ?? Date.now();
    await this.meta.set(SENTINEL_KEY, { at: new Date().toISOString(), since });
  }

  /**
   * When the store's current data began (Sentinel.since), seeding it first when it is found emptied, so
   * the answer is never older than the data. A session issued before it may have been logged out in
   * data that is gone, so it must not be accepted. Rejects with the store's 503 when it cannot be read.
   */
  async epoch(): Promise<number> {
    let sentinel = await this.meta.get(SENTINEL_KEY);
    if (!sentinel?.since) {
      // Emptied (seed it again now, not at the next timer tick), or marked by a version without `since`.
      if (!sentinel) await this.check();
      else await this.mark();
      sentinel = await this.meta.get(SENTINEL_KEY);
    }
    // Read back after a write the store lost at once (emptied again): nothing before now is trusted.
    return sentinel?.since ?? Date.now();
  }

  /** Runs `seed` now and again whenever the store is found emptied; it must be idempotent. */
  async add(name: string, seed: () => Promise<void>): Promise<void> {
    await seed();
    this.seeds.set(name, seed);
    await this.mark();
  }

  /**
   * True when the sentinel was missing and every seed ran again. Rejects with
   * the store's own 503 when the store cannot be read (nothing is re-seeded
   * then; the next check tries again). Concurrent callers share one check.
   */
  check(): Promise<boolean> {
    this.running ??= this.checkOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async checkOnce(): Promise<boolean> {
    if (await this.meta.get(SENTINEL_KEY)) return false;
    const names = [...this.seeds.keys()];
    this.log.warn({ seeds: names }, 'The store has lost its seed sentinel (emptied or replaced): seeding it again');
    for (const seed of this.seeds.values()) await seed();
    // A new `since`: the data the old one stood for is gone (see epoch()).
    await this.meta.set(SENTINEL_KEY, { at: new Date().toISOString(), since: Date.now() });
    this.lastReseed = { at: new Date().toISOString(), seeds: names };
    return true;
  }

  /** Checks every `intervalMs` in the background, so a store restarted empty is repaired without a /readyz call. */
  watch(intervalMs: number): void {
    this.stop();
    let failing = false;
    this.timer = setInterval(() => {
      this.check().then(
        () => (failing = false),
        (err: unknown) => {
          // Once per outage: the store's own 503s already tell each caller.
          if (!failing)
            this.log.error(
              { detail: (err as { detail?: string }).detail ?? String(err) },
              'Seed check could not read the store',
            );
          failing = true;
        },
      );
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
