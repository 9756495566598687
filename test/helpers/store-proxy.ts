import type { Collection, Store } from '../../core/store.ts';

/**
 * The store as it is, except that every collection it hands out goes through `wrap` first: for tests that hold,
 * count or spy on a collection's calls (the race tests' gates, the fuzzer's write log).
 */
export function wrapCollections(
  inner: Store,
  wrap: <T>(name: string, collection: Collection<T>) => Collection<T>,
): Store {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'collection') return (name: string) => wrap(name, target.collection(name));
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
