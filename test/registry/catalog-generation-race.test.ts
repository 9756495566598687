import t, { type Test } from 'tap';
import type { Collection, Store } from '../../core/store.ts';
import { openStore } from '../../core/store.ts';
import { IndexedCollection } from '../../plugins/registry/catalog/repository.ts';
import { startRedis } from '../fixtures/redis-server.ts';
import { wrapCollections } from '../helpers/store-proxy.ts';

/**
 * Two replicas' catalog mirrors (IndexedCollection) on one redis-server started
 * here, each on its own Redis connection, as two processes would have them.
 * The generation scheme must leave each replica, after its own sync(), with
 * every record any replica wrote before that sync.
 */

interface Item {
  path: string;
  n: number;
}

/** Holds a store's calls at points the test chooses, to force one interleaving of two replicas. */
interface Gates {
  /** While set, writes to the generation key (whatever the scheme calls them) wait for it. */
  generation?: Promise<void>;
  /** While set, a load's scan stops before handing on its second record (already read), and calls `scanHeld` with its key. */
  scan?: Promise<void>;
  scanHeld?: (key: string) => void;
}

function gatedStore(inner: Store, gates: Gates): Store {
  const wrapCollection = <T>(name: string, c: Collection<T>): Collection<T> =>
    new Proxy(c, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        const fn = (v as (...a: unknown[]) => unknown).bind(target);
        // Named by prefix so the test also runs against the earlier `registry_generations` scheme.
        if (name.startsWith('registry_generation') && ['set', 'increment'].includes(String(prop)))
          return async (...args: unknown[]) => {
            if (gates.generation) await gates.generation;
            return fn(...args);
          };
        if (prop === 'entries' && !name.startsWith('registry_generation'))
          return async function* () {
            let i = 0;
            for await (const e of target.entries()) {
              if (i++ === 1 && gates.scan) {
                gates.scanHeld?.((e as [string, unknown])[0]);
                await gates.scan;
              }
              yield e;
            }
          };
        return fn;
      },
    });
  return wrapCollections(inner, wrapCollection);
}

function latch(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

async function replicas(t: Test, name: string) {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const stores = [
    await openStore({ backend: 'redis', url: redis.url }),
    await openStore({ backend: 'redis', url: redis.url }),
  ];
  t.teardown(async () => {
    for (const s of stores) await s.close();
  });
  const gates: [Gates, Gates] = [{}, {}];
  const [a, b] = stores.map((s, i) => new IndexedCollection<Item>(gatedStore(s, gates[i]!), name, (v) => v.path));
  await a!.load();
  await b!.load();
  return { a: a!, b: b!, gates };
}

const paths = (c: IndexedCollection<Item>) => c.list().map((v) => v.path);

t.test('two writes at once: the replica whose generation write lands last still loads the other record', async (t) => {
  const { a, b, gates } = await replicas(t, 'race_servers');
  // A stores its record, then its generation write is held while B writes in full.
  const held = latch();
  gates[0].generation = held.promise;
  const writeA = a.set('/a', { path: '/a', n: 1 });
  await new Promise((r) => setTimeout(r, 50));
  await b.set('/b', { path: '/b', n: 1 });
  gates[0].generation = undefined;
  held.open();
  await writeA;
  // Both writes are acknowledged: after its own sync, each replica must hold both records.
  await a.sync();
  await b.sync();
  t.same(paths(a), ['/a', '/b'], 'A, whose generation write landed last, sees B’s record');
  t.same(paths(b), ['/a', '/b'], 'B sees A’s record');
});

t.test('concurrent batches of writes on two replicas: after its sync each sees every record', async (t) => {
  const { a, b } = await replicas(t, 'race_batches');
  const missed: string[] = [];
  for (let batch = 0; batch < 20; batch++) {
    const writes = Array.from({ length: 10 }, (_, i) => {
      const path = `/s${batch}-${i}`;
      return (i % 2 === 0 ? a : b).set(path, { path, n: batch });
    });
    await Promise.all(writes);
    for (const [name, r] of [
      ['A', a],
      ['B', b],
    ] as const) {
      await r.sync();
      const have = new Set(paths(r));
      for (let i = 0; i < 10; i++) if (!have.has(`/s${batch}-${i}`)) missed.push(`${name} missed /s${batch}-${i}`);
    }
  }
  t.same(missed, [], 'no replica misses a record written before its sync (200 writes, 20 batches)');
  t.equal(a.size, 200);
  t.equal(b.size, 200);
});

for (const mode of ['delete', 'update'] as const)
  t.test(
    `a reload racing this replica’s own ${mode}: readers see the whole old mirror, the ${mode} is kept`,
    async (t) => {
      const { a, b, gates } = await replicas(t, `race_reload_${mode}`);
      for (const p of ['/1', '/2', '/3']) await a.set(p, { path: p, n: 0 });
      await b.set('/4', { path: '/4', n: 0 });
      // A is behind now; its reload is held with one record read from the store but not yet in its map.
      const held = latch();
      let heldKey = '';
      const reached = latch();
      gates[0].scan = held.promise;
      gates[0].scanHeld = (key) => {
        heldKey = key;
        reached.open();
      };
      const syncing = a.sync();
      await reached.promise;
      gates[0].scan = undefined;
      t.same(paths(a), ['/1', '/2', '/3'], 'during the reload, readers see the previous mirror, not a half-filled one');
      // This replica changes the record the scan holds, which the scan read before the change.
      if (mode === 'delete') await a.delete(heldKey);
      else await a.set(heldKey, { path: heldKey, n: 9 });
      held.open();
      await syncing;
      const want = ['/1', '/2', '/3', '/4'].filter((p) => mode === 'update' || p !== heldKey);
      t.same(paths(a), want, `after the reload: ${want.join(' ')} (${heldKey} was held)`);
      if (mode === 'update')
        t.equal(a.get(heldKey)?.n, 9, 'the reload does not put back the value it read before the write');
      await b.sync();
      t.same(paths(b), want, 'B agrees');
      if (mode === 'update') t.equal(b.get(heldKey)?.n, 9);
    },
  );
