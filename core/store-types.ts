import type { Health } from './health.ts';

/**
 * The core store: named collections of JSON values on keyv. Every backend
 * failure surfaces as a 503 that names the store, never as a miss: callers
 * must be able to tell "not there" from "could not look".
 */
export interface Collection<T> {
  get(key: string): Promise<T | undefined>;
  getMany(keys: string[]): Promise<Array<T | undefined>>;
  set(key: string, value: T, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<boolean>;
  /**
   * Write only when no live entry holds the key, atomically on every backend
   * (one process or several on a shared SQLite file or Redis): true when this
   * call wrote it. For claims that must be won once (a team task run).
   */
  setIfAbsent(key: string, value: T, ttlMs?: number): Promise<boolean>;
  /**
   * Several entries in one backend call, written all or none where the backend
   * can (SQLite: one transaction; Redis: one MULTI). Optional: callers fall back
   * to set() per entry. For writers that batch (observability's write-behind),
   * where an autocommit per entry is most of the cost.
   */
  setMany?(entries: Array<{ key: string; value: T }>): Promise<void>;
  /**
   * Add one to the integer at `key` (an absent or expired key counts as 0) and
   * return the new value, atomically on every backend: concurrent calls from any
   * number of processes on one Redis or SQLite file each get a different value,
   * with no gaps. get() reads the number; the entry has no TTL. A key holding
   * anything but an integer is refused with a plain Error (a bug in the caller).
   * For version counters that must tell "only my write" from "someone else's too".
   */
  increment(key: string): Promise<number>;
  /** Every live entry of the collection, in key order where the backend keeps one. */
  entries(): AsyncIterable<[string, T]>;
  clear(): Promise<void>;
}

export type StoreBackend = 'sqlite' | 'redis' | 'memory';

export interface Store {
  readonly backend: StoreBackend;
  /** Where the data lives, without credentials (for logs and /readyz). */
  readonly location: string;
  collection<T>(name: string): Collection<T>;
  healthcheck(): Promise<Health>;
  close(): Promise<void>;
}
