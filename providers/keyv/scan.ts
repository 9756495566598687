import type { Collection, Store } from '../../core/store.ts';

/**
 * Why memory's store operations on SQLite go one at a time: the SQLite backend
 * streams a scan from one shared prepared statement, and better-sqlite3
 * refuses any other statement on the connection while a scan is open ("This
 * statement is busy executing a query", "connection is busy"). Async callers
 * interleave at every await, so two requests (an index build and a session
 * listing, or a scan and a write) collide. On SQLite every operation of the
 * memory providers therefore runs through one queue per store, and a scan is
 * drained to the end inside its turn. Each operation is a synchronous SQLite
 * call, so the queue costs little; Redis and the in-process backend have no
 * shared statement and are used directly.
 */
const queues = new WeakMap<Store, { tail: Promise<unknown> }>();

export function exclusiveStore(store: Store): Store {
  if (store.backend !== 'sqlite') return store;
  let q = queues.get(store);
  if (!q) queues.set(store, (q = { tail: Promise.resolve() }));
  const queue = q;
  const run = <R>(fn: () => Promise<R>): Promise<R> => {
    const p = queue.tail.then(fn, fn);
    queue.tail = p.catch(() => {});
    return p;
  };
  async function* drained<T>(p: Promise<Array<[string, T]>>): AsyncIterable<[string, T]> {
    yield* await p;
  }
  return {
    backend: store.backend,
    location: store.location,
    healthcheck: () => store.healthcheck(),
    close: () => store.close(),
    collection<T>(name: string): Collection<T> {
      const c = store.collection<T>(name);
      return {
        get: (k) => run(() => c.get(k)),
        getMany: (k) => run(() => c.getMany(k)),
        set: (k, v, ttl) => run(() => c.set(k, v, ttl)),
        delete: (k) => run(() => c.delete(k)),
        clear: () => run(() => c.clear()),
        entries: () =>
          drained(
            run(async () => {
              const out: Array<[string, T]> = [];
              for await (const e of c.entries()) out.push(e);
              return out;
            }),
          ),
      };
    },
  };
}

/** Every entry of a collection as an array, so callers may write to the store while walking the result. */
export async function scanAll<T>(_store: Store, col: Collection<T>): Promise<Array<[string, T]>> {
  const out: Array<[string, T]> = [];
  for await (const entry of col.entries()) out.push(entry);
  return out;
}
