import t from 'tap';
import { openStore } from '../../core/store.ts';
import { SCAN_PAGE } from '../../core/store-sqlite.ts';
import { tempDir } from '../helpers/app.ts';

/**
 * Scans of the SQLite store page with `.all()` instead of streaming one shared
 * prepared statement: with the streaming version, a second scan or a write
 * made while a scan was suspended at a `yield` failed with "This statement is
 * busy executing a query" (or "connection is busy").
 */

const N = SCAN_PAGE * 2 + 37; // more than two pages, so both scans cross page boundaries
const key = (i: number) => `k${String(i).padStart(5, '0')}`;

t.test('two interleaved scans and writes in between both complete', async (t) => {
  const store = await openStore({ backend: 'sqlite', dataDir: tempDir('sb-scan-') });
  t.teardown(() => store.close());
  const a = store.collection<{ i: number }>('scan-a');
  const b = store.collection<{ i: number }>('scan-b');
  for (let i = 0; i < N; i++) {
    await a.set(key(i), { i });
    await b.set(key(i), { i });
  }

  const itA = a.entries()[Symbol.asyncIterator]();
  const itB = b.entries()[Symbol.asyncIterator]();
  const seenA: string[] = [];
  const seenB: string[] = [];
  let step = 0;
  for (;;) {
    const [ra, rb] = [await itA.next(), await itB.next()];
    if (!ra.done) seenA.push(ra.value[0]);
    if (!rb.done) seenB.push(rb.value[0]);
    if (ra.done && rb.done) break;
    // Writes while both scans are suspended mid-page: an update, a new key, a delete, on both collections.
    if (step === 3) {
      await a.set(key(1), { i: -1 });
      await b.set('zzz-after-the-cursor', { i: N });
      t.ok(await a.delete(key(N - 1)), 'a delete during the scan is acknowledged');
      t.same(await a.get(key(1)), { i: -1 }, 'a read during the scan sees the write');
    }
    step++;
  }

  t.equal(seenA.length, N - 1, 'scan A saw every key except the one deleted ahead of its cursor');
  t.notOk(seenA.includes(key(N - 1)));
  t.same(seenA, [...seenA].sort(), 'in key order');
  t.equal(new Set(seenA).size, seenA.length, 'no key twice across page boundaries');
  t.equal(seenB.length, N + 1, 'scan B saw every key plus the one written ahead of its cursor');
  t.equal(seenB[seenB.length - 1], 'zzz-after-the-cursor');
});

t.test('a scan survives its consumer writing to the same collection at every step', async (t) => {
  const store = await openStore({ backend: 'sqlite', dataDir: tempDir('sb-scan-') });
  t.teardown(() => store.close());
  const c = store.collection<{ i: number; seen?: boolean }>('scan-rewrite');
  for (let i = 0; i < N; i++) await c.set(key(i), { i });
  let n = 0;
  for await (const [k, v] of c.entries()) {
    await c.set(k, { ...v, seen: true });
    n++;
  }
  t.equal(n, N, 'every entry visited once');
  const all = await c.getMany(Array.from({ length: N }, (_, i) => key(i)));
  t.ok(
    all.every((v) => v?.seen === true),
    'every rewrite landed',
  );
});

t.test('a scan of an empty collection and of exactly one page ends cleanly', async (t) => {
  const store = await openStore({ backend: 'sqlite', dataDir: tempDir('sb-scan-') });
  t.teardown(() => store.close());
  const empty: string[] = [];
  for await (const [k] of store.collection('scan-empty').entries()) empty.push(k);
  t.same(empty, []);
  const page = store.collection<number>('scan-page');
  for (let i = 0; i < SCAN_PAGE; i++) await page.set(key(i), i);
  const values: number[] = [];
  for await (const [, v] of page.entries()) values.push(v);
  t.same(
    values,
    Array.from({ length: SCAN_PAGE }, (_, i) => i),
  );
});
