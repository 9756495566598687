import { deepFreeze } from './deep-frozen.ts';
import type { Collection } from './store-types.ts';
import { NotACounter, UnstorableValue, unstorableError } from './store-value.ts';

/**
 * In-process collections: a Map per collection, without keyv. keyv's
 * JSON (de)serialisation, namespacing and hooks were the largest item of ours
 * in a CPU profile of the routed memory retrieve on the `in_memory` provider.
 *
 * Values keep the JSON semantics of the durable backends (a Date comes back
 * as a string, an undefined property is dropped), in one of two ways:
 * - `copy` (the default): the JSON text is kept and every read parses a fresh
 *   copy, so a caller may mutate what it got, exactly as with SQLite or Redis.
 * - `frozen`: the value is normalised once on write, deep-frozen, and the same
 *   object is handed to every reader: a read costs a Map lookup. A caller that
 *   tries to mutate it gets a TypeError (ES modules are strict), never a
 *   silent change to stored data. The `in_memory` memory provider uses this.
 */
export type MemoryValues = 'copy' | 'frozen';

interface Entry {
  /** The JSON text (copy mode) or the frozen value (frozen mode). */
  v: unknown;
  /** Expiry as a Date.now() timestamp; 0 = never. */
  exp: number;
}

export class MemoryCollection<T> implements Collection<T> {
  private readonly map = new Map<string, Entry>();

  constructor(private readonly mode: MemoryValues) {}

  private encode(value: T): unknown {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (err) {
      throw unstorableError('memory', new UnstorableValue(err));
    }
    if (this.mode === 'copy' || text === undefined) return text;
    return deepFreeze(JSON.parse(text));
  }

  private decode(v: unknown): T | undefined {
    if (v === undefined) return undefined;
    return (this.mode === 'copy' ? JSON.parse(v as string) : v) as T;
  }

  private live(key: string, e: Entry | undefined): Entry | undefined {
    if (e && e.exp !== 0 && e.exp <= Date.now()) {
      this.map.delete(key);
      return undefined;
    }
    return e;
  }

  async get(key: string): Promise<T | undefined> {
    const e = this.live(key, this.map.get(key));
    return e ? this.decode(e.v) : undefined;
  }

  async getMany(keys: string[]): Promise<Array<T | undefined>> {
    return keys.map((k) => {
      const e = this.live(k, this.map.get(k));
      return e ? this.decode(e.v) : undefined;
    });
  }

  async set(key: string, value: T, ttlMs?: number): Promise<void> {
    this.map.set(key, { v: this.encode(value), exp: ttlMs && ttlMs > 0 ? Date.now() + ttlMs : 0 });
  }

  /** One event-loop turn, no await between the check and the write: atomic within the process. */
  async setIfAbsent(key: string, value: T, ttlMs?: number): Promise<boolean> {
    if (this.live(key, this.map.get(key))) return false;
    this.map.set(key, { v: this.encode(value), exp: ttlMs && ttlMs > 0 ? Date.now() + ttlMs : 0 });
    return true;
  }

  /** Read and write in one turn, like setIfAbsent: atomic within the process, which is all a memory store has. */
  async increment(key: string): Promise<number> {
    const e = this.live(key, this.map.get(key));
    const current = e ? this.decode(e.v) : 0;
    if (!Number.isSafeInteger(current)) throw new NotACounter(key);
    const n = (current as number) + 1;
    this.map.set(key, { v: this.encode(n as T), exp: 0 });
    return n;
  }

  async delete(key: string): Promise<boolean> {
    const e = this.live(key, this.map.get(key));
    return e ? this.map.delete(key) : false;
  }

  /** Insertion order. A Map iterator tolerates writes during the walk: it sees keys added ahead of it. */
  async *entries(): AsyncIterable<[string, T]> {
    for (const [k, e] of this.map) {
      if (!this.live(k, e)) continue;
      const v = this.decode(e.v);
      if (v !== undefined) yield [k, v];
    }
  }

  async clear(): Promise<void> {
    this.map.clear();
  }
}
