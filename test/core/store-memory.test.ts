import t from 'tap';
import { openStore } from '../../core/store.ts';
import { contract } from './store-contract.ts';

/** The in-process store without keyv (core/store-memory.ts), in both value modes. */

t.test('frozen mode meets the store contract', async (t) => {
  const store = await openStore({ backend: 'memory', memoryValues: 'frozen' });
  t.teardown(() => store.close());
  await contract(t, store);
});

t.test('both modes keep the JSON semantics of the durable backends', async (t) => {
  for (const memoryValues of ['copy', 'frozen'] as const) {
    const store = await openStore({ backend: 'memory', memoryValues });
    const c = store.collection<Record<string, unknown>>('json');
    await c.set('k', { when: new Date('2026-01-02T03:04:05.000Z'), gone: undefined, n: 1 });
    t.same(
      await c.get('k'),
      { when: '2026-01-02T03:04:05.000Z', n: 1 },
      `${memoryValues}: a Date is stored as its JSON string, undefined dropped`,
    );
    await store.close();
  }
});

t.test('copy mode: every read is an independent copy, as with SQLite or Redis', async (t) => {
  const store = await openStore({ backend: 'memory' });
  t.teardown(() => store.close());
  const c = store.collection<{ tags: string[] }>('copy');
  const original = { tags: ['a'] };
  await c.set('k', original);
  original.tags.push('changed after set');
  const first = (await c.get('k'))!;
  first.tags.push('changed by a reader');
  t.same(await c.get('k'), { tags: ['a'] }, 'neither the writer nor a reader changes what is stored');
});

t.test('frozen mode: readers share one frozen value and cannot change it', async (t) => {
  const store = await openStore({ backend: 'memory', memoryValues: 'frozen' });
  t.teardown(() => store.close());
  const c = store.collection<{ tags: string[]; meta: { n: number } }>('frozen');
  const original = { tags: ['a'], meta: { n: 1 } };
  await c.set('k', original);
  original.tags.push('changed after set');
  const a = (await c.get('k'))!;
  const b = (await c.get('k'))!;
  t.equal(a, b, 'the same object for every reader (no copy per read)');
  t.same(a, { tags: ['a'], meta: { n: 1 } }, 'the writer keeps its own object');
  t.throws(() => a.tags.push('x'), TypeError, 'nested arrays are frozen');
  t.throws(
    () => {
      a.meta.n = 2;
    },
    TypeError,
    'nested objects are frozen',
  );
  const [[, listed]] = await (async () => {
    const out: Array<[string, unknown]> = [];
    for await (const e of c.entries()) out.push(e);
    return out;
  })();
  t.equal(listed, a, 'entries() hands out the same frozen value');
});
