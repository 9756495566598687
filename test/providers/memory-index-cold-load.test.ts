import pino from 'pino';
import t, { type Test } from 'tap';
import type { MemoryProvider, MemoryRecord, SearchHit } from '../../core/primitives/memory.ts';
import { openStore, type Store } from '../../core/store.ts';
import { encodeIndex, SNAPSHOT_FORMAT } from '../../providers/keyv/index-snapshot.ts';
import { keyvMemory } from '../../providers/keyv/memory-provider.ts';
import { NamespaceIndex } from '../../providers/keyv/search-index.ts';
import type { SnapshotManifest } from '../../providers/keyv/snapshot-store.ts';
import { tempDir } from '../helpers/app.ts';

t.setTimeout(900_000);

/**
 * Loading a persisted index (a cold start): the snapshot is stored deflated, searches that arrive
 * while it loads answer as the loaded index does, and snapshots written before compression (or by a
 * writer using a compression this version does not know) are still handled.
 */

const N = 3000;
const WORDS = ['orchard', 'apple', 'river', 'stone', 'lantern', 'harbour', 'meadow', 'copper', 'violet', 'thunder'];
const text = (i: number) => `${WORDS[i % 10]} ${WORDS[(i * 3) % 10]} ${WORDS[(i * 7) % 10]} item${i % 97} common`;
const QUERIES = ['orchard river', 'common', 'item17 copper', 'thunder', 'item96', 'common stone'];
const make = (store: Store) =>
  keyvMemory.create(
    'cold',
    {},
    { store, logger: pino({ level: 'silent' }), dataDir: tempDir(), lookup: () => undefined },
  ) as Promise<MemoryProvider>;
const shape = (hits: SearchHit[]) => hits.map((h) => `${h.record.key}:${h.score}`);
const manifests = (store: Store) => store.collection<SnapshotManifest>('memory:cold:index-snapshot');

/** The store, counting full scans of record collections (a rebuild reads every record; a load reads none). */
function counting(inner: Store): { store: Store; scans: () => number } {
  let scans = 0;
  const store: Store = {
    backend: inner.backend,
    location: inner.location,
    healthcheck: () => inner.healthcheck(),
    close: () => inner.close(),
    collection<T>(name: string) {
      const c = inner.collection<T>(name);
      if (!name.includes(':rec:')) return c;
      return new Proxy(c, {
        get(target, prop) {
          if (prop === 'entries')
            return () => {
              scans++;
              return target.entries();
            };
          const v = Reflect.get(target, prop);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
    },
  };
  return { store, scans: () => scans };
}

/** A SQLite store holding N records in namespace 'kb' and their snapshot; the answers before the restart. */
async function seeded(t: Test): Promise<{ store: Store; before: string[][] }> {
  const store = await openStore({ backend: 'sqlite', dataDir: tempDir() });
  t.teardown(() => store.close());
  const writer = await make(store);
  for (let i = 0; i < N; i++) await writer.store('kb', { key: `r${i}`, content: text(i), metadata: { shard: i % 3 } });
  const before = (await Promise.all(QUERIES.map((q) => writer.search('kb', { query: q, top_k: 7 })))).map(shape);
  await writer.close(); // writes the pending snapshot
  return { store, before };
}

t.test('the snapshot is stored deflated and a cold load answers as before the restart', async (t) => {
  const { store, before } = await seeded(t);
  const m = await manifests(store).get('kb');
  t.equal(m?.format, SNAPSHOT_FORMAT);
  t.equal(m?.compression, 'deflate-raw', 'the manifest says how the chunks are stored');
  t.ok(m && m.raw_bytes !== undefined && m.bytes < m.raw_bytes, `stored ${m?.bytes} bytes for ${m?.raw_bytes} encoded`);

  const { store: watched, scans } = counting(store);
  const restarted = await make(watched);
  // Every search is started at once: the first starts the load, the others arrive while it runs (it inflates
  // on the thread pool and decodes in slices) and must wait for it, never answer from a partial index.
  let turns = 0;
  let loading = true;
  void (async () => {
    while (loading) {
      await new Promise((r) => setImmediate(r));
      turns++;
    }
  })();
  const during = await Promise.all(QUERIES.map((q) => restarted.search('kb', { query: q, top_k: 7 })));
  loading = false;
  t.ok(turns >= 2, `the load yielded to the event loop (${turns} turns)`);
  t.equal(scans(), 0, 'the index was loaded, not rebuilt from the records');
  t.same(during.map(shape), before, 'searches during the cold load answered as the index did before the restart');
  const after = await Promise.all(QUERIES.map((q) => restarted.search('kb', { query: q, top_k: 7 })));
  t.same(after.map(shape), before, 'and so do searches after it');
  t.equal(after[1].length, 7, 'a broad query fills top_k');
  await restarted.close();
});

t.test('a snapshot stored before compression still loads', async (t) => {
  const { store, before } = await seeded(t);
  const m = (await manifests(store).get('kb')) as SnapshotManifest;
  // Rewritten the way earlier versions stored it: the encoded bytes as they are, no compression fields.
  const index = new NamespaceIndex(m.version);
  for await (const [, r] of store.collection<MemoryRecord>('memory:cold:rec:kb').entries()) index.put(r);
  const raw = (await encodeIndex(index.lexical)) as Buffer;
  const chunks = store.collection<string>('memory:cold:index-chunk:kb');
  await chunks.clear();
  await chunks.set('plain:000000', raw.toString('base64'));
  await manifests(store).set('kb', {
    format: m.format,
    version: m.version,
    id: 'plain',
    chunks: 1,
    bytes: raw.length,
    records: N,
  });

  const { store: watched, scans } = counting(store);
  const restarted = await make(watched);
  const after = await Promise.all(QUERIES.map((q) => restarted.search('kb', { query: q, top_k: 7 })));
  t.equal(scans(), 0, 'loaded from the uncompressed snapshot, not rebuilt from the records');
  t.same(after.map(shape), before, 'and it ranks as before');
  await restarted.close();
});

t.test('a snapshot in a compression this version does not know is rebuilt from the records', async (t) => {
  const { store, before } = await seeded(t);
  const m = (await manifests(store).get('kb')) as SnapshotManifest;
  await manifests(store).set('kb', { ...m, compression: 'zstd' as never });
  const { store: watched, scans } = counting(store);
  const restarted = await make(watched);
  const after = await Promise.all(QUERIES.map((q) => restarted.search('kb', { query: q, top_k: 7 })));
  t.equal(scans(), 1, 'the records were read once (a rebuild), not an error');
  t.same(after.map(shape), before, 'same answers');
  await restarted.close();
});
