import t from 'tap';
import pino from 'pino';
import type { MemoryProvider } from '../../core/primitives/memory.ts';
import { openStore, type Collection, type Store } from '../../core/store.ts';
import { keyvMemory } from '../../providers/keyv/memory-provider.ts';
import { tempDir } from '../helpers/app.ts';

/** A store that counts full scans of record collections (what building a namespace index costs). */
function countingScans(inner: Store): { store: Store; scans: () => number } {
  let scans = 0;
  const store: Store = {
    ...inner,
    collection<T>(name: string): Collection<T> {
      const c = inner.collection<T>(name);
      if (!name.includes(':rec:')) return c;
      return {
        get: (k) => c.get(k),
        getMany: (k) => c.getMany(k),
        set: (k, v, ttl) => c.set(k, v, ttl),
        setIfAbsent: (k, v, ttl) => c.setIfAbsent(k, v, ttl),
        increment: (k) => c.increment(k),
        delete: (k) => c.delete(k),
        clear: () => c.clear(),
        entries: () => {
          scans++;
          return c.entries();
        },
      };
    },
  };
  return { store, scans: () => scans };
}

const make = (store: Store) =>
  keyvMemory.create(
    'idx',
    {},
    { store, logger: pino({ level: 'silent' }), dataDir: tempDir(), lookup: () => undefined },
  ) as Promise<MemoryProvider>;

t.test('concurrent first searches share one index build', async (t) => {
  const inner = await openStore({ backend: 'sqlite', dataDir: tempDir() });
  t.teardown(() => inner.close());
  const writer = await make(inner);
  for (let i = 0; i < 500; i++)
    await writer.store('big', { key: `r${i}`, content: `record number ${i} about ${i % 2 ? 'apples' : 'pears'}` });

  // A second process's view: same store, no index yet.
  const { store, scans } = countingScans(inner);
  const reader = await make(store);
  const results = await Promise.all(
    Array.from({ length: 10 }, () => reader.search('big', { query: 'apples', top_k: 5 })),
  );
  t.equal(scans(), 1, 'ten concurrent searches scanned the namespace once');
  t.ok(
    results.every((r) => r.length === 5 && r.every((h) => h.record.content.includes('apples'))),
    'and all got the same answer',
  );

  await writer.store('big', { key: 'new', content: 'golden apples apples apples' });
  t.equal(
    (await reader.search('big', { query: 'golden', top_k: 1 }))[0]?.record.key,
    'new',
    "the other writer's record is found",
  );
  t.equal(scans(), 2, 'after a foreign write the index is rebuilt once');
  await reader.search('big', { query: 'apples', top_k: 1 });
  t.equal(scans(), 2, 'and then reused');
});

t.test('on SQLite, concurrent scans, reads and writes of one store do not collide', async (t) => {
  const store = await openStore({ backend: 'sqlite', dataDir: tempDir() });
  t.teardown(() => store.close());
  const w = await make(store);
  for (let i = 0; i < 300; i++) {
    await w.store('ns1', { key: `r${i}`, content: `hello ${i}` });
    await w.store('ns2', { key: `r${i}`, content: `hello ${i}` });
  }
  await w.createEvent('ann', 's', { messages: [{ role: 'user', text: 'hi' }] });
  // A second instance on the same store (another named memory instance) and a fresh reader with no indexes.
  const r = await make(store);
  const other = await keyvMemory.create(
    'other',
    {},
    { store, logger: pino({ level: 'silent' }), dataDir: tempDir(), lookup: () => undefined },
  );
  // Started in one tick, these interleave at every await: unserialised, SQLite refused them with "statement is busy".
  const outcomes = await Promise.allSettled([
    r.search('ns1', { query: 'hello', top_k: 3 }),
    r.search('ns2', { query: 'hello', top_k: 3 }),
    r.namespaces(),
    r.list('ns1', { limit: 5, offset: 0 }),
    r.sessions('ann'),
    r.listEvents('ann', 's'),
    r.deleteSession!('ann', 's'),
    other.namespaces(),
    w.store('ns3', { key: 'x', content: 'y' }),
    r.retrieve('ns1', 'r1'),
  ]);
  const failed = outcomes
    .filter((o) => o.status === 'rejected')
    .map((o) => ((o as PromiseRejectedResult).reason as Error).message);
  t.same(failed, [], 'every operation succeeded');
});
