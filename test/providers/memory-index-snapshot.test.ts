import { randomUUID } from 'node:crypto';
import pino from 'pino';
import t from 'tap';
import type { MemoryProvider } from '../../core/primitives/memory.ts';
import { type Collection, openStore, type Store } from '../../core/store.ts';
import { keyvMemory } from '../../providers/keyv/memory-provider.ts';
import type { SnapshotManifest } from '../../providers/keyv/snapshot-store.ts';
import { tempDir } from '../helpers/app.ts';

t.setTimeout(900_000);

/** A store that counts what is read from record collections: full scans and records fetched by key. */
function counting(inner: Store): { store: Store; scans: () => number; read: () => number } {
  let scans = 0;
  let read = 0;
  const store: Store = {
    ...inner,
    backend: inner.backend,
    location: inner.location,
    healthcheck: () => inner.healthcheck(),
    close: () => inner.close(),
    collection<T>(name: string): Collection<T> {
      const c = inner.collection<T>(name);
      if (!name.includes(':rec:')) return c;
      return {
        get: (k) => {
          read++;
          return c.get(k);
        },
        getMany: (k) => {
          read += k.length;
          return c.getMany(k);
        },
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
  return { store, scans: () => scans, read: () => read };
}

const make = (store: Store, name = 'snap') =>
  keyvMemory.create(
    name,
    {},
    { store, logger: pino({ level: 'silent' }), dataDir: tempDir(), lookup: () => undefined },
  ) as Promise<MemoryProvider>;

const WORDS = ['orchard', 'apple', 'river', 'stone', 'lantern', 'harbour', 'meadow', 'copper', 'violet', 'thunder'];
const text = (i: number) => `${WORDS[i % 10]} ${WORDS[(i * 3) % 10]} ${WORDS[(i * 7) % 10]} note ${i} end`;
const keysOf = (hits: { record: { key: string }; score: number }[]) => hits.map((h) => `${h.record.key}:${h.score}`);

t.test('a restart loads the persisted index instead of reading every record', async (t) => {
  const inner = await openStore({ backend: 'sqlite', dataDir: tempDir() });
  t.teardown(() => inner.close());
  const writer = await make(inner);
  for (let i = 0; i < 2000; i++)
    await writer.store('kb', { key: `r${i}`, content: text(i), metadata: { shard: i % 4 } });
  const queries = ['orchard river', 'note', 'copper violet thunder', 'lantern'];
  const before = await Promise.all(queries.map((q) => writer.search('kb', { query: q, top_k: 5 })));
  const filtered = await writer.search('kb', { query: 'meadow', top_k: 5, filters: { shard: 2 } });
  const page = (await writer.list('kb', { limit: 5, offset: 10 })).records.map((r) => r.key);
  await writer.close(); // writes the pending snapshot

  const manifest = await inner.collection<SnapshotManifest>('memory:snap:index-snapshot').get('kb');
  t.equal(manifest?.records, 2000, 'the snapshot holds every record');

  const { store, scans, read } = counting(inner);
  const restarted = await make(store);
  const after = await Promise.all(queries.map((q) => restarted.search('kb', { query: q, top_k: 5 })));
  t.equal(scans(), 0, 'no record collection was scanned');
  t.ok(read() <= 4 * 5, `only the hits were read from the store (${read()} records)`);
  t.same(after.map(keysOf), before.map(keysOf), 'same hits, same scores');
  t.same(
    keysOf(await restarted.search('kb', { query: 'meadow', top_k: 5, filters: { shard: 2 } })),
    keysOf(filtered),
    'metadata filters work on the loaded index',
  );
  t.same(
    (await restarted.list('kb', { limit: 5, offset: 10 })).records.map((r) => r.key),
    page,
    'list pages are the same from the loaded index',
  );

  // A write makes the snapshot stale: a third process must rebuild, not load it. (Written by an instance
  // with no index of the namespace, so no snapshot save is scheduled that could race the check.)
  const other = await make(inner);
  await other.store('kb', { key: 'fresh', content: 'an entirely novel word: zephyr' });
  const third = counting(inner);
  const p3 = await make(third.store);
  t.same(
    (await p3.search('kb', { query: 'zephyr', top_k: 3 })).map((h) => h.record.key),
    ['fresh'],
    'the new record is found',
  );
  t.equal(third.scans(), 1, 'the stale snapshot was not used: the records were read once');
  await restarted.close();
  await other.close();
  await p3.close();
});

t.test('a namespace too small to be worth a snapshot gets none', async (t) => {
  const inner = await openStore({ backend: 'sqlite', dataDir: tempDir() });
  t.teardown(() => inner.close());
  const m = await make(inner);
  for (let i = 0; i < 50; i++) await m.store('small', { key: `r${i}`, content: text(i) });
  await m.search('small', { query: 'orchard', top_k: 3 });
  await m.close();
  t.equal(await inner.collection<SnapshotManifest>('memory:snap:index-snapshot').get('small'), undefined);
});

t.test('a snapshot whose chunks are gone is rebuilt from the records, not an error', async (t) => {
  const inner = await openStore({ backend: 'sqlite', dataDir: tempDir() });
  t.teardown(() => inner.close());
  const writer = await make(inner);
  for (let i = 0; i < 1000; i++) await writer.store('kb', { key: `r${i}`, content: text(i) });
  await writer.search('kb', { query: 'orchard', top_k: 3 });
  await writer.close();
  const m = await inner.collection<SnapshotManifest>('memory:snap:index-snapshot').get('kb');
  t.ok(m, 'a snapshot was written');
  await inner.collection('memory:snap:index-chunk:kb').clear();
  const c = counting(inner);
  const reader = await make(c.store);
  t.equal((await reader.search('kb', { query: 'orchard', top_k: 3 })).length, 3);
  t.equal(c.scans(), 1, 'rebuilt from the records');
});

t.test('replicas on Redis: B loads A’s snapshot, and a write on A is seen by a search on B', async (t) => {
  const name = `snap-${randomUUID()}`;
  const storeA = await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' });
  const storeB = await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' });
  t.teardown(async () => {
    const { createClient } = await import('@keyv/redis');
    const c = createClient({ url: 'redis://127.0.0.1:6379' });
    await c.connect();
    for await (const keys of c.scanIterator({ MATCH: `*memory:${name}*`, COUNT: 500 }))
      if (keys.length) await c.del(keys);
    await c.quit();
    await storeA.close();
    await storeB.close();
  });
  const a = await make(storeA, name);
  for (let i = 0; i < 1000; i++) await a.store('kb', { key: `r${i}`, content: text(i) });
  const fromA = await a.search('kb', { query: 'harbour stone', top_k: 5 });
  await a.close(); // flush A's snapshot; A's provider keeps working (the store stays open)

  const b = counting(storeB);
  const mb = await make(b.store, name);
  t.same(keysOf(await mb.search('kb', { query: 'harbour stone', top_k: 5 })), keysOf(fromA), 'B agrees with A');
  t.equal(b.scans(), 0, 'B loaded the snapshot instead of scanning');

  await a.store('kb', { key: 'late', content: 'harbour stone harbour stone harbour' });
  const onA = await a.search('kb', { query: 'harbour stone', top_k: 5 });
  const onB = await mb.search('kb', { query: 'harbour stone', top_k: 5 });
  t.equal(onB[0]?.record.key, 'late', "A's write is B's best hit");
  t.same(keysOf(onB), keysOf(onA), 'and both replicas rank the same');
  await a.delete('kb', 'late');
  t.notOk(
    (await mb.search('kb', { query: 'harbour', top_k: 10 })).some((h) => h.record.key === 'late'),
    "A's delete is seen by B",
  );
  await mb.close();
});
