import { unavailable } from './errors.ts';
import type { Health } from './health.ts';
import type { Collection, Store } from './store-types.ts';

/** Default for `store.command_timeout_ms`. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 2000;

/**
 * Settles like `work`, or rejects with `onLate()` once `ms` have passed. The
 * late outcome of `work` is consumed, so a reply that arrives after the
 * deadline is not an unhandled rejection.
 *
 * When the timer fires, the verdict waits one turn of the event loop
 * (setImmediate runs after the I/O poll): if the process itself was stalled
 * past the deadline (a long synchronous task, a GC pause), a reply that
 * arrived meanwhile is read first and the call succeeds, rather than a
 * healthy store being reported down because its answer sat unread.
 */
export function withinDeadline<T>(work: Promise<T>, ms: number, onLate: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => setImmediate(() => reject(onLate())), ms);
    work.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * A store whose every call answers within `ms`. A frozen Redis (SIGSTOP, a
 * stalled VM) keeps its TCP connection open and never replies; node-redis's
 * own command timeout stops counting once a command is written to the socket,
 * and the kernel accepts writes for a stopped process, so without this every
 * store-backed request (and /readyz) waited as long as the freeze lasted.
 * A call past its deadline is the same 503 as any other store fault. Its
 * command may still run if the store wakes up: the detail says so, because a
 * caller that retries a write must know it may land twice.
 */
export function withDeadline(store: Store, ms: number): Store {
  const late = (op: string) => () =>
    unavailable(
      'SB_ERR_STORE_UNAVAILABLE',
      `Store '${store.backend}' is unavailable (${op}): no answer within ${ms} ms (store.command_timeout_ms); check that it is running and not paused. A write may still be applied when it answers.`,
    );
  const cache = new Map<string, Collection<unknown>>();
  return {
    backend: store.backend,
    location: store.location,
    collection<T>(name: string): Collection<T> {
      let c = cache.get(name);
      if (!c) cache.set(name, (c = deadlineCollection(store.collection<unknown>(name), ms, late)));
      return c as Collection<T>;
    },
    // /readyz must say `down` for a store that does not answer, within its own deadline.
    healthcheck: () => withinDeadline(store.healthcheck(), ms, late('health')).catch((): Health => 'down'),
    // Not bounded here: the backend's close gives up on a silent peer itself and drops the socket.
    close: () => store.close(),
  };
}

/**
 * Every method of the collection, bounded: promise results race the deadline
 * and `entries()` bounds each step of its walk. The methods are found on the
 * collection itself rather than listed here, so a method added to the
 * Collection contract is bounded too without this file having to know it.
 */
function deadlineCollection<T>(inner: Collection<T>, ms: number, late: (op: string) => () => Error): Collection<T> {
  const out: Record<string, unknown> = {};
  for (const name of methodNames(inner)) {
    const fn = (inner as unknown as Record<string, (...args: unknown[]) => unknown>)[name];
    out[name] =
      name === 'entries'
        ? () => boundedWalk(inner.entries(), ms, late('list'))
        : (...args: unknown[]) => {
            const r = fn.apply(inner, args);
            return r instanceof Promise ? withinDeadline(r, ms, late(name)) : r;
          };
  }
  return out as unknown as Collection<T>;
}

function methodNames(obj: object): string[] {
  const names = new Set<string>();
  for (let p: object | null = obj; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const n of Object.getOwnPropertyNames(p)) {
      if (n !== 'constructor' && typeof (obj as Record<string, unknown>)[n] === 'function') names.add(n);
    }
  }
  return [...names];
}

async function* boundedWalk<T>(it: AsyncIterable<T>, ms: number, onLate: () => Error): AsyncIterable<T> {
  const iter = it[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      const step = await withinDeadline(iter.next(), ms, onLate);
      if (step.done) {
        finished = true;
        return;
      }
      yield step.value;
    }
  } finally {
    // A caller that stops early (or a step past its deadline) lets the backend's walk clean up.
    if (!finished) void iter.return?.()?.catch(() => undefined);
  }
}
