import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import { keyvNamespace, openStore } from '../../core/store.ts';
import type { Collection, Store } from '../../core/store-types.ts';
import type { Stored } from './list.ts';

/**
 * On SQLite, observability keeps its records in a file of its own beside the
 * core store's (`observability.db` in the same folder), and its write-behind
 * batches are written by a worker thread with its own connection to that file.
 *
 * Why: serialising a batch into keyv's envelope and inserting it was, after
 * every other cut, most of what `auto_trace` still cost a chat on the request
 * thread (bench/RESULTS.md). better-sqlite3 is synchronous, so that work runs
 * on whichever thread calls it; a worker takes it off the one serving requests.
 * The file is separate because SQLite has one writer per file: a worker
 * holding the core file's write lock for a batch would make the request
 * thread's own writes (sessions, history) wait in SQLite's busy handler.
 *
 * Retention sweeps and list queries run on the worker too (sql-list.ts).
 * Reads by id and deletes stay on the request thread through an ordinary
 * store on the same file (WAL: its reads never wait for the worker's batch,
 * and a flushed batch is committed before flush() returns).
 */
export const OWN_FILE = 'observability.db';

type Row = [key: string, j: string, t: string, seq: string];
type Reply = { id: number; error?: string; deleted?: number; rows?: unknown[] };

/** One worker per file, answering each batch once it is committed. */
export class BackgroundWriter {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly file: string,
    private readonly logger: FastifyBaseLogger | undefined,
  ) {}

  /** Write rows in one transaction; resolves when committed, rejects with the writer's error. */
  async write(rows: Row[]): Promise<void> {
    await this.send({ rows });
  }

  /**
   * Retention on the worker, per key range [lo, hi): records whose time is before `cutoff` (null: none by age),
   * then all but the newest `max` by (time, seq). Answers how many were deleted.
   */
  async sweep(ranges: Array<[lo: string, hi: string]>, cutoff: string | null, max: number): Promise<number> {
    return (await this.send({ sweep: { ranges, cutoff, max } })).deleted ?? 0;
  }

  /** A read on the worker's connection; answers its rows. */
  async query<R>(sql: string, params: Array<string | number | null>): Promise<R[]> {
    return ((await this.send({ query: { sql, params } })).rows ?? []) as R[];
  }

  async close(): Promise<void> {
    if (!this.worker) return;
    const w = this.worker;
    await this.send({ close: true }).catch(() => undefined);
    // Forgotten before it is gone: a write after close() starts a new thread rather than post to this one.
    this.worker = undefined;
    await w.terminate();
  }

  private send(body: {
    rows?: Row[];
    sweep?: { ranges: Array<[string, string]>; cutoff: string | null; max: number };
    query?: { sql: string; params: Array<string | number | null> };
    close?: boolean;
  }): Promise<Reply> {
    const w = this.started();
    const id = ++this.nextId;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Held while an answer is awaited (a shutdown flush must not exit before it), let go when idle.
      if (this.pending.size === 1) w.ref();
      w.postMessage({ id, ...body });
    });
  }

  /** The worker, started on first use and again after it died (its batches failed and are retried). */
  private started(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./sqlite-writer-worker.mjs', import.meta.url), {
      workerData: { file: this.file },
      // The worker is plain JavaScript: no TypeScript loader needed, so none is passed on.
      execArgv: [],
    });
    w.unref();
    w.on('message', (m: Reply) => this.settle(m.id, m.error, m));
    const fail = (err: Error) => {
      if (this.worker === w) this.worker = undefined;
      for (const id of [...this.pending.keys()]) this.settle(id, err.message, { id });
    };
    w.on('error', (err) => {
      this.logger?.warn({ err }, 'observability writer thread failed');
      fail(err);
    });
    w.on('exit', (code) => fail(new Error(`observability writer thread exited (${code})`)));
    this.worker = w;
    return w;
  }

  private settle(id: number, error: string | undefined, reply: Reply): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
    if (error === undefined) p.resolve(reply);
    else p.reject(new Error(`observability store write failed: ${error}`));
  }
}

interface Shared {
  store: Store;
  writer: BackgroundWriter;
  users: number;
}
/** Instances on one file share its store handle and worker (tests build many instances on one store). */
const shared = new Map<string, Shared>();

/** The provider's own file beside the core store's, when the core store is a SQLite file. */
export function ownFileOf(core: Store): string | undefined {
  if (core.backend !== 'sqlite' || core.location === ':memory:') return undefined;
  return join(dirname(core.location), OWN_FILE);
}

export interface OwnStore {
  store: Store;
  /** A collection of the own store whose setMany goes through the writer thread. */
  collection<T>(name: string): Collection<T>;
  /** Retention over these collections, run by the writer thread (see sweep() in the worker). */
  sweep(collections: string[], cutoff: string | null, max: number): Promise<number>;
  /** A read run by the writer thread (sql-list.ts). */
  query<R>(sql: string, params: Array<string | number | null>): Promise<R[]>;
  release(): Promise<void>;
}

export async function openOwnStore(file: string, logger: FastifyBaseLogger | undefined): Promise<OwnStore> {
  let s = shared.get(file);
  if (!s) {
    const store = await openStore({ backend: 'sqlite', dataDir: dirname(file), file: OWN_FILE });
    s = { store, writer: new BackgroundWriter(file, logger), users: 0 };
    shared.set(file, s);
  }
  s.users++;
  const { store, writer } = s;
  let released = false;
  return {
    store,
    collection<T>(name: string): Collection<T> {
      const col = store.collection<T>(name);
      const prefix = `${keyvNamespace(name)}:`;
      // Everything else is the ordinary collection; only the batch write moves to the worker.
      return Object.assign(Object.create(col) as Collection<T>, {
        setMany: (entries: Array<{ key: string; value: Stored<unknown> }>) =>
          writer.write(entries.map((e) => [prefix + e.key, e.value.j, e.value.t, e.value.seq])),
      });
    },
    sweep: (collections, cutoff, max) =>
      writer.sweep(
        collections.map((c) => [`${keyvNamespace(c)}:`, `${keyvNamespace(c)};`]),
        cutoff,
        max,
      ),
    query: (sql, params) => writer.query(sql, params),
    async release() {
      if (released) return;
      released = true;
      if (--s.users > 0) return;
      shared.delete(file);
      await writer.close();
      await store.close();
    },
  };
}
