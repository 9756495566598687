import { EventEmitter } from 'node:events';
import type { Collection, Store } from '../../../core/store.ts';

export type ChangeKind = 'created' | 'updated' | 'deleted';

export interface Change<T> {
  kind: ChangeKind;
  key: string;
  /** The record after the change (absent on delete). */
  value?: T;
  /** The record before the change (absent on create). */
  previous?: T;
}

/**
 * A core-store collection mirrored in memory. Reads never touch the store
 * (10,000 servers listed in a few ms); writes go to the store first and only
 * then to the mirror, so a store outage is a 503 and the mirror never holds
 * what was not persisted.
 *
 * Replicas on a shared Redis stay fresh through a generation counter: every
 * write stores its record, then increments `<name>` in the
 * `registry_generation_counters` collection (Collection.increment, atomic in
 * Redis). The mirror holds every write whose increment is <= `generation`.
 * `sync()` (called at the start of each catalog request) reads the counter,
 * one Redis round trip, and reloads the whole collection when it differs from
 * `generation`. A write's own increment keeps the mirror current only when it
 * returns exactly `generation + 1`: any other value means another replica
 * wrote in between, a record this mirror does not hold, so the mirror is
 * marked stale and the next sync() reloads. (With a random id per write, as
 * before, the later of two concurrent writers took its own id for the current
 * generation and never loaded the other's record.) After sync() resolves, the
 * mirror holds every write acknowledged anywhere before sync() was called.
 * A single-process store (SQLite, memory) has no other writer, so sync() is a
 * no-op there.
 */
export class IndexedCollection<T> {
  private map = new Map<string, T>();
  private sorted?: T[];
  /** The counter value the mirror reflects; -1 before the first load. */
  private generation = -1;
  /** Set when the mirror may lack or misorder a write (see bump()); the next sync() reloads. */
  private stale = false;
  /** The load in progress, and one queued behind it: loads never overlap (see load()). */
  private loading?: Promise<void>;
  private queued?: Promise<void>;
  /** This replica's writes since the running load began (undefined = deleted), replayed over its scan. */
  private writesDuringLoad?: Map<string, T | undefined>;
  readonly events = new EventEmitter();
  private readonly col: Collection<T>;
  private readonly gens: Collection<number>;
  private readonly shared: boolean;
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    store: Store,
    readonly name: string,
    private readonly sortKey: (v: T) => string = () => '',
  ) {
    this.col = store.collection<T>(name);
    // Not the old `registry_generations` (random ids): a counter cannot be added to those.
    this.gens = store.collection<number>('registry_generation_counters');
    this.shared = store.backend === 'redis';
    this.events.setMaxListeners(50);
  }

  /**
   * Reloads the mirror from the store. Loads run one at a time: two
   * overlapping scans could each clear the map and then put back what the
   * other had already replaced or seen deleted. A call made while one runs
   * waits for it and shares the next one (which starts after the call, so it
   * sees every write acknowledged before the call).
   */
  load(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.loading) return this.startLoad();
    const next = this.loading
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.startLoad();
      });
    this.queued = next;
    return next;
  }

  private startLoad(): Promise<void> {
    const run = this.scan().finally(() => {
      if (this.loading === run) this.loading = undefined;
    });
    this.loading = run;
    return run;
  }

  /**
   * Builds a fresh map and swaps it in at the end, so readers never see a
   * half-loaded mirror. This replica's own writes that land during the scan
   * are replayed over it: the scan may have read their keys before them.
   */
  private async scan(): Promise<void> {
    // Whatever made the mirror stale is covered by this load: it reads the store after it.
    this.stale = false;
    const writes = new Map<string, T | undefined>();
    this.writesDuringLoad = writes;
    try {
      // The generation is read before the records: every write counted in it stored its record
      // before incrementing, so the scan sees it. A write landing during the scan leaves this
      // replica on the older generation, so the next sync() reloads. Read after, it could record
      // the new generation without the new record, and miss that record until some later write.
      const generation = this.shared ? ((await this.gens.get(this.name)) ?? 0) : 0;
      const fresh = new Map<string, T>();
      for await (const [k, v] of this.col.entries()) fresh.set(k, v);
      for (const [k, v] of writes) v === undefined ? fresh.delete(k) : fresh.set(k, v);
      this.map = fresh;
      this.sorted = undefined;
      if (this.shared) this.generation = generation;
    } catch (err) {
      this.stale = true;
      throw err;
    } finally {
      if (this.writesDuringLoad === writes) this.writesDuringLoad = undefined;
    }
    // Derived indexes (discovery) cannot tell a whole reload from change events: they rebuild on this one.
    this.events.emit('reload');
  }

  onReload(fn: () => void): () => void {
    this.events.on('reload', fn);
    return () => this.events.off('reload', fn);
  }

  async sync(): Promise<void> {
    if (!this.shared) return;
    const gen = (await this.gens.get(this.name)) ?? 0;
    if (this.stale || gen !== this.generation) await this.load();
  }

  get(key: string): T | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  get size(): number {
    return this.map.size;
  }

  /** Every record, ordered by sortKey; the array is shared until the next write, so callers must not mutate it. */
  list(): readonly T[] {
    if (!this.sorted) {
      const pairs = [...this.map.values()].map((v) => [this.sortKey(v), v] as const);
      pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this.sorted = pairs.map((p) => p[1]);
    }
    return this.sorted;
  }

  async set(key: string, value: T): Promise<void> {
    const previous = this.map.get(key);
    await this.col.set(key, value);
    this.map.set(key, value);
    this.writesDuringLoad?.set(key, value);
    this.sorted = undefined;
    await this.bump();
    this.events.emit('change', { kind: previous ? 'updated' : 'created', key, value, previous } satisfies Change<T>);
  }

  async delete(key: string): Promise<boolean> {
    const previous = this.map.get(key);
    await this.col.delete(key);
    const had = this.map.delete(key);
    this.writesDuringLoad?.set(key, undefined);
    this.sorted = undefined;
    await this.bump();
    if (had) this.events.emit('change', { kind: 'deleted', key, previous } satisfies Change<T>);
    return had;
  }

  /**
   * Runs read-modify-write steps on one key one after another. The mirror is
   * updated only after the store write, so without this a health update and a
   * toggle landing together would each start from the old record and one would be lost.
   */
  lock<R>(key: string, fn: () => Promise<R>): Promise<R> {
    const prev = this.queues.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return run;
  }

  onChange(fn: (change: Change<T>) => void): () => void {
    this.events.on('change', fn);
    return () => this.events.off('change', fn);
  }

  /**
   * Counts this write in the generation. The mirror stays current only when
   * the counter moved by exactly this write; otherwise another replica wrote
   * in between and the mirror is marked stale: the next sync() reloads. (A
   * load that ends after this sets the generation it read before its scan,
   * never a newer one, so at worst it costs one more reload.) A write that
   * fails here has stored its record but not counted it: the caller gets the
   * 503, and other replicas see the record after the next write.
   */
  private async bump(): Promise<void> {
    if (!this.shared) return;
    const n = await this.gens.increment(this.name);
    if (n === this.generation + 1) this.generation = n;
    else this.stale = true;
  }
}
