import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import t, { type Test } from 'tap';
import type { MemoryProvider, MemoryRecord } from '../../core/primitives/memory.ts';
import { openStore, type Store } from '../../core/store.ts';
import { inMemoryMemory, keyvMemory } from '../../providers/keyv/memory-provider.ts';
import { tempDir } from '../helpers/app.ts';

t.setTimeout(900_000);

/**
 * The first search of a cold namespace builds its index. The build runs in slices
 * that yield to the event loop, so an HTTP request to the same process is answered
 * while it runs (a build that held the loop would answer it only afterwards), and
 * searches that arrive during the build get the answer the finished index gives.
 */

const N = 30_000;
const WORDS = ['orchard', 'apple', 'river', 'stone', 'lantern', 'harbour', 'meadow', 'copper', 'violet', 'thunder'];
const text = (i: number) => `${WORDS[i % 10]} ${WORDS[(i * 3) % 10]} ${WORDS[(i * 7) % 10]} item${i % 997} common`;
const ctx = (store: Store) => ({
  store,
  logger: pino({ level: 'silent' }),
  dataDir: tempDir(),
  lookup: () => undefined,
});

async function pingServer(t: { teardown: (fn: () => unknown) => void }): Promise<string> {
  const server = createServer((_req, res) => res.end('pong'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

async function checkBuild(t: Test, m: MemoryProvider): Promise<void> {
  const url = await pingServer(t);
  await fetch(url); // connection set up before the build starts
  const order: string[] = [];
  let turns = 0;
  let building = true;
  void (async () => {
    while (building) {
      await new Promise((r) => setImmediate(r));
      turns++;
    }
  })();
  const queries = ['orchard river', 'common', 'item17 copper', 'thunder', 'item996'];
  const first = m.search('big', { query: queries[0], top_k: 5 }).then((r) => {
    order.push('search');
    return r;
  });
  const ping = fetch(url).then(async (r) => {
    order.push('ping');
    return r.text();
  });
  // Arrive during the build: they must wait for it (or see the same index), never a partial one.
  const during = Promise.all(queries.map((q) => m.search('big', { query: q, top_k: 5 })));
  const [firstHits, pong, duringHits] = await Promise.all([first, ping, during]);
  building = false;
  t.equal(pong, 'pong');
  t.same(order, ['ping', 'search'], 'an HTTP request to the same process was answered while the index was built');
  t.ok(turns >= 2, `the build yielded to the event loop (${turns} turns)`);
  const after = await Promise.all(queries.map((q) => m.search('big', { query: q, top_k: 5 })));
  const shape = (hits: { record: MemoryRecord; score: number }[]) => hits.map((h) => `${h.record.key}:${h.score}`);
  t.same(shape(firstHits), shape(after[0]), 'the first search answered from the whole index');
  t.same(duringHits.map(shape), after.map(shape), 'searches during the build answered as the finished index does');
  t.equal(after[1].length, 5, 'a broad query fills top_k');
  t.ok(
    after[4].every((h) => h.record.content.includes('item996')),
    'a selective query finds only records holding its term',
  );
}

t.test('in_memory: the first search of a cold namespace does not hold the event loop', async (t) => {
  const m = (await inMemoryMemory.create(
    'in_memory',
    {},
    ctx(await openStore({ backend: 'memory' })),
  )) as MemoryProvider;
  t.teardown(() => m.close());
  for (let i = 0; i < N; i++) await m.store('big', { key: `r${i}`, content: text(i) });
  await checkBuild(t, m);
});

t.test('keyv on SQLite: the first search of a cold namespace does not hold the event loop', async (t) => {
  const store = await openStore({ backend: 'sqlite', dataDir: tempDir() });
  t.teardown(() => store.close());
  // Seeded straight into the record collection (what a restarted process finds), with no snapshot.
  const col = store.collection<MemoryRecord>('memory:cold:rec:big');
  const now = new Date().toISOString();
  for (let i = 0; i < N; i++) {
    const key = `r${i}`;
    await col.set(key, { namespace: 'big', key, content: text(i), metadata: {}, created_at: now, updated_at: now });
  }
  const m = (await keyvMemory.create('cold', {}, ctx(store))) as MemoryProvider;
  await checkBuild(t, m);
  await m.close();
});
