import { randomUUID } from 'node:crypto';
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
 * Replicas on a shared Redis stay fresh through a generation key: every write
 * sets `<name>` in the `registry_generations` collection to a fresh id, and
 * `sync()` (called at the start of each catalog request) reads that key, one
 * Redis round trip, and reloads the whole collection when it differs from the
 * generation this process last saw. A single-process store (SQLite, memory)
 * has no other writer, so sync() is a no-op there.
 */
export class IndexedCollection<T> {
  private readonly map = new Map<string, T>();
  private sorted?: T[];
  private generation = '';
  readonly events = new EventEmitter();
  private readonly col: Collection<T>;
  private readonly gens: Collection<string>;
  private readonly shared: boolean;
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    store: Store,
    readonly name: string,
    private readonly sortKey: (v: T) => string = () => '',
  ) {
    this.col = store.collection<T>(name);
    this.gens = store.collection<string>('registry_generations');
    this.shared = store.backend === 'redis';
    this.events.setMaxListeners(50);
  }

  async load(): Promise<void> {
    // The generation is read before the records: a write landing during the scan then leaves this
    // replica on the older generation, so the next sync() reloads. Read after, it could record the
    // new generation without the new record, and miss that record until some later write.
    const generation = this.shared ? ((await this.gens.get(this.name)) ?? '') : '';
    this.map.clear();
    for await (const [k, v] of this.col.entries()) this.map.set(k, v);
    this.sorted = undefined;
    if (this.shared) this.generation = generation;
    // Derived indexes (discovery) cannot tell a whole reload from change events: they rebuild on this one.
    this.events.emit('reload');
  }

  onReload(fn: () => void): () => void {
    this.events.on('reload', fn);
    return () => this.events.off('reload', fn);
  }

  async sync(): Promise<void> {
    if (!this.shared) return;
    const gen = (await this.gens.get(this.name)) ?? '';
    if (gen !== this.generation) await this.load();
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
    this.sorted = undefined;
    await this.bump();
    this.events.emit('change', { kind: previous ? 'updated' : 'created', key, value, previous } satisfies Change<T>);
  }

  async delete(key: string): Promise<boolean> {
    const previous = this.map.get(key);
    await this.col.delete(key);
    const had = this.map.delete(key);
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

  private async bump(): Promise<void> {
    if (!this.shared) return;
    this.generation = randomUUID();
    await this.gens.set(this.name, this.generation);
  }
}
