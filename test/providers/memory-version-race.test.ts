import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import type { MemoryRecord } from '../../core/primitives/memory.ts';
import type { Collection, Store } from '../../core/store.ts';
import { openStore } from '../../core/store.ts';
import { enc } from '../../providers/keyv/ids.ts';
import { RecordStore, SNAPSHOT_MIN_RECORDS } from '../../providers/keyv/records.ts';
import { NamespaceIndex } from '../../providers/keyv/search-index.ts';
import { SnapshotStore } from '../../providers/keyv/snapshot-store.ts';
import { startRedis } from '../fixtures/redis-server.ts';
import { wrapCollections } from '../helpers/store-proxy.ts';

/**
 * Two replicas' memory record stores (RecordStore: records plus a search index
 * per namespace in process memory) on one redis-server started here, each on
 * its own connection, as two processes would have them. After any write has
 * been acknowledged, each replica's next list and search must reflect it, and
 * must rank exactly as an index built from scratch does (issue 25/26: the
 * namespace version key).
 */

const PREFIX = 'memory:race';
const NS = 'kb';

/** Holds a store's calls at points the test chooses, to force one interleaving. */
interface Gates {
  /** While set, writes to the namespace version key (whatever the scheme calls it) wait for it, after `versionHeld`. */
  version?: Promise<void>;
  versionHeld?: () => void;
  /** While set, a scan of the records stops before handing on its second record, after `scanHeld` (the keys read). */
  scan?: Promise<void>;
  scanHeld?: (keys: string[]) => void;
}

function gatedStore(inner: Store, gates: Gates): Store {
  const wrapCollection = <T>(name: string, c: Collection<T>): Collection<T> =>
    new Proxy(c, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        const fn = (v as (...a: unknown[]) => unknown).bind(target);
        // Named by prefix, so the test also runs against the earlier `ns-version` (random id) scheme.
        if (name.startsWith(`${PREFIX}:ns-`) && ['set', 'increment'].includes(String(prop)))
          return async (...args: unknown[]) => {
            if (gates.version) {
              gates.versionHeld?.();
              await gates.version;
            }
            return fn(...args);
          };
        if (prop === 'entries' && name.startsWith(`${PREFIX}:rec:`))
          return async function* () {
            const read: string[] = [];
            for await (const e of target.entries()) {
              read.push((e as [string, unknown])[0]);
              if (read.length === 2 && gates.scan) {
                gates.scanHeld?.(read);
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

interface Replica {
  records: RecordStore;
  gates: Gates;
}

async function setup(t: Test) {
  const redis = await startRedis();
  const stores: Store[] = [];
  t.teardown(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    redis.stop();
  });
  const open = async () => {
    const s = await openStore({ backend: 'redis', url: redis.url });
    stores.push(s);
    return s;
  };
  const replica = async (): Promise<Replica> => {
    const gates: Gates = {};
    return { records: new RecordStore(gatedStore(await open(), gates), PREFIX), gates };
  };
  return { open, replica };
}

/** Keys and scores of a search, by key (ranking ties may order differently between two indexes). */
async function hits(r: RecordStore, query: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const h of await r.search(NS, { query, top_k: 1000 })) out[h.record.key] = Math.round(h.score * 1e9) / 1e9;
  return out;
}

async function listed(r: RecordStore): Promise<{ total: number; keys: string[] }> {
  const page = await r.list(NS, { limit: 1000, offset: 0 });
  return { total: page.total, keys: page.records.map((x) => x.key).sort() };
}

/** What every replica must answer: a third RecordStore, built from the records now. */
async function checkAgainstFresh(
  t: Test,
  open: () => Promise<Store>,
  replicas: Record<string, RecordStore>,
  queries: string[],
) {
  const fresh = new RecordStore(await open(), PREFIX);
  const want = await listed(fresh);
  for (const [name, r] of Object.entries(replicas)) {
    t.same(await listed(r), want, `${name} lists every record (${want.total})`);
    for (const q of queries) t.same(await hits(r, q), await hits(fresh, q), `${name} ranks '${q}' as a fresh index`);
  }
}

function held(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

t.test('a write counted while another replica writes does not leave the writer believing it is current', async (t) => {
  const { open, replica } = await setup(t);
  const a = await replica();
  const b = await replica();
  await a.records.put(NS, { key: 'apples', content: 'apples grow in the orchard' });
  t.same(Object.keys(await hits(a.records, 'orchard')), ['apples']);
  t.same(Object.keys(await hits(b.records, 'orchard')), ['apples']);

  // A's write reaches its version update and waits there while B writes and counts its own.
  const gate = held();
  const reached = new Promise<void>((r) => (a.gates.versionHeld = r));
  a.gates.version = gate.promise;
  const aPut = a.records.put(NS, { key: 'cherries', content: 'cherries blossom in the orchard' });
  await reached;
  await b.records.put(NS, { key: 'plums', content: 'plums ripen in the orchard late' });
  a.gates.version = undefined;
  gate.release();
  await aPut;

  t.same(Object.keys(await hits(a.records, 'orchard')).sort(), ['apples', 'cherries', 'plums'], "A sees B's plums");
  t.same(Object.keys(await hits(b.records, 'orchard')).sort(), ['apples', 'cherries', 'plums'], "B sees A's cherries");
  await checkAgainstFresh(t, open, { A: a.records, B: b.records }, ['orchard', 'plums', 'blossom']);
});

t.test('concurrent batches of writes from two replicas to one namespace', async (t) => {
  const { open, replica } = await setup(t);
  const a = await replica();
  const b = await replica();
  const all: string[] = [];
  for (let round = 0; round < 20; round++) {
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 5; i++) {
      for (const [name, r] of [
        ['a', a],
        ['b', b],
      ] as const) {
        const key = `${name}-${round}-${i}`;
        all.push(key);
        writes.push(r.records.put(NS, { key, content: `orchard note ${key} word${round}x${i}` }));
      }
    }
    // Also a rewrite and a delete of earlier records, from both sides, in the same batch.
    if (round > 0) {
      writes.push(a.records.put(NS, { key: `b-${round - 1}-0`, content: `orchard rewritten by a in ${round}` }));
      writes.push(b.records.delete(NS, `a-${round - 1}-1`));
      all.splice(all.indexOf(`a-${round - 1}-1`), 1);
    }
    await Promise.all(writes);
    for (const [name, r] of [
      ['A', a],
      ['B', b],
    ] as const) {
      const seen = await hits(r.records, 'orchard');
      const missing = all.filter((k) => !(k in seen));
      const extra = Object.keys(seen).filter((k) => !all.includes(k));
      t.same({ missing, extra }, { missing: [], extra: [] }, `round ${round}: ${name} finds every record`);
    }
  }
  await checkAgainstFresh(t, open, { A: a.records, B: b.records }, ['orchard', 'rewritten', 'word3x2']);
});

t.test("a build that swaps in while this replica's write is being counted is not written over", async (t) => {
  const { open, replica } = await setup(t);
  const a = await replica();
  const b = await replica();
  await a.records.put(NS, { key: 'apples', content: 'apples zebra orchard' });
  await a.records.put(NS, { key: 'pears', content: 'pears orchard' });
  await hits(a.records, 'orchard');
  await b.records.put(NS, { key: 'plums', content: 'plums yak orchard' }); // A's index is now behind

  // A rewrites apples (stored, not yet counted); a search meanwhile rebuilds A's index, which reads the new apples.
  const gate = held();
  const reached = new Promise<void>((r) => (a.gates.versionHeld = r));
  a.gates.version = gate.promise;
  const aPut = a.records.put(NS, { key: 'apples', content: 'apples yak orchard' });
  await reached;
  t.same(Object.keys(await hits(a.records, 'yak')).sort(), ['apples', 'plums'], 'the rebuild read the new content');
  a.gates.version = undefined;
  gate.release();
  await aPut;

  t.same(Object.keys(await hits(a.records, 'zebra')), [], 'the old content is not found');
  await checkAgainstFresh(t, open, { A: a.records, B: b.records }, ['orchard', 'yak', 'zebra', 'apples']);
});

t.test('a delete while a build scans, of a record the scan already read, is not put back', async (t) => {
  const { open, replica } = await setup(t);
  const a = await replica();
  for (const k of ['k1', 'k2', 'k3', 'k4']) await a.records.put(NS, { key: k, content: `${k} orchard` });
  const b = await replica();

  const gate = held();
  const reached = new Promise<string[]>((r) => (b.gates.scanHeld = r));
  b.gates.scan = gate.promise;
  const search = hits(b.records, 'orchard'); // B's first search: a build from the records
  const [first, second] = await reached; // both read by the scan already (Redis scans in no particular order)
  await b.records.delete(NS, first);
  await b.records.put(NS, { key: second, content: `${second} rewritten` });
  b.gates.scan = undefined;
  gate.release();
  await search;

  const rest = ['k1', 'k2', 'k3', 'k4'].filter((k) => k !== first && k !== second);
  t.same(Object.keys(await hits(b.records, 'orchard')).sort(), rest, 'the deleted and the rewritten record are gone');
  await checkAgainstFresh(t, open, { A: a.records, B: b.records }, ['orchard', 'rewritten', first]);
});

t.test('concurrent writes to one key on one replica leave its index as a fresh build', async (t) => {
  const { open, replica } = await setup(t);
  const a = await replica();
  await a.records.put(NS, { key: 'other', content: 'orchard alpha beta gamma delta' });
  await a.records.put(NS, { key: 'k', content: 'orchard old' });
  await hits(a.records, 'orchard');
  for (let round = 0; round < 5; round++)
    await Promise.all(
      ['alpha', 'beta', 'gamma', 'delta'].map((w) => a.records.put(NS, { key: 'k', content: `${w} ${round}` })),
    );
  await checkAgainstFresh(t, open, { A: a.records }, ['orchard', 'alpha', 'beta', 'gamma', 'delta', 'old']);
});

t.test('a namespace from before the counter (UUID version key, UUID snapshot) is rebuilt once', async (t) => {
  const { open } = await setup(t);
  const store = await open();
  const n = SNAPSHOT_MIN_RECORDS + 200;
  const now = new Date().toISOString();
  const recs: MemoryRecord[] = Array.from({ length: n }, (_, i) => ({
    namespace: NS,
    key: `r${String(i).padStart(5, '0')}`,
    content: `orchard record number${i}`,
    metadata: {},
    created_at: now,
    updated_at: now,
  }));
  const col = store.collection<MemoryRecord>(`${PREFIX}:rec:${enc(NS)}`);
  for (const r of recs) await col.set(r.key, r);
  // What the previous code left: a random id as the version, and a snapshot of that id (here of only 10 records).
  const oldVersion = randomUUID();
  await store.collection<string>(`${PREFIX}:ns-version`).set(NS, oldVersion);
  const partial = new NamespaceIndex(oldVersion);
  for (const r of recs.slice(0, 10)) partial.put(r);
  t.ok(await new SnapshotStore(store, PREFIX).save(NS, oldVersion, partial.lexical), 'old snapshot written');

  const r1 = new RecordStore(await open(), PREFIX);
  t.equal((await listed(r1)).total, n, 'every record listed, not the old snapshot');
  t.same(Object.keys(await hits(r1, `number${n - 1}`)), [recs[n - 1].key], 'a record the old snapshot lacks is found');
  await r1.flush();
  t.equal((await r1.snapshotManifest(NS))?.version, '0', 'the snapshot is rewritten at the counter value');

  await r1.put(NS, { key: 'late', content: 'orchard late arrival' });
  await r1.flush();
  t.equal((await r1.snapshotManifest(NS))?.version, '1', 'a write counts from there');
  const r2 = new RecordStore(await open(), PREFIX);
  t.equal((await listed(r2)).total, n + 1, 'another replica (loading that snapshot) lists every record');
  t.same(Object.keys(await hits(r2, 'arrival')), ['late']);
  t.equal(await store.collection<string>(`${PREFIX}:ns-version`).get(NS), oldVersion, 'the old key is left alone');
});
