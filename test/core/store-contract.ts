import type { Test } from 'tap';
import type { Store } from '../../core/store.ts';

/** The collection contract every store backend meets (used by store.test.ts and store-redis.test.ts). */
export async function collect<T>(it: AsyncIterable<[string, T]>): Promise<Array<[string, T]>> {
  const out: Array<[string, T]> = [];
  for await (const e of it) out.push(e);
  return out;
}

/** The collection contract, run against every backend that is up. */
export async function contract(t: Test, store: Store) {
  const a = store.collection<{ n: number }>('alpha');
  const b = store.collection<{ n: number }>('beta');
  await a.clear();
  await b.clear();
  t.equal(await a.get('missing'), undefined, 'a miss is undefined');
  await a.set('one', { n: 1 });
  await a.set('two', { n: 2 });
  await b.set('one', { n: 100 });
  t.same(await a.get('one'), { n: 1 });
  t.same(await b.get('one'), { n: 100 }, 'collections are separate namespaces');
  t.same(await a.getMany(['two', 'nope', 'one']), [{ n: 2 }, undefined, { n: 1 }]);
  t.same(await a.getMany([]), []);
  t.same(
    (await collect(a.entries())).sort(),
    [
      ['one', { n: 1 }],
      ['two', { n: 2 }],
    ],
    'entries of one collection only',
  );
  t.equal(await a.delete('one'), true);
  t.equal(await a.delete('one'), false, 'deleting twice says it was not there');
  await a.set('short', { n: 3 }, 50);
  t.same(await a.get('short'), { n: 3 });
  await new Promise((r) => setTimeout(r, 120));
  t.equal(await a.get('short'), undefined, 'a TTL expires');
  t.notOk(
    (await collect(a.entries())).some(([k]) => k === 'short'),
    'expired entries are not listed',
  );
  await a.clear();
  t.same(await collect(a.entries()), [], 'clear empties the collection');
  t.same(await b.get('one'), { n: 100 }, 'and only that collection');
  t.equal(await store.healthcheck(), 'ok');
  await prefixIsolation(t, store);
  await setIfAbsent(t, store);
}

/** set-if-absent: one winner among concurrent claims, readable by get(), free again once expired or deleted. */
export async function setIfAbsent(t: Test, store: Store) {
  const c = store.collection<{ by: number }>('claims');
  await c.clear();
  const wins = await Promise.all(Array.from({ length: 8 }, (_, i) => c.setIfAbsent('task', { by: i })));
  t.equal(wins.filter(Boolean).length, 1, 'exactly one of eight concurrent claims wins');
  t.same(await c.get('task'), { by: wins.indexOf(true) }, 'the winner is what get() reads');
  t.equal(await c.setIfAbsent('task', { by: 99 }), false, 'a later claim loses');
  t.equal(await c.delete('task'), true);
  t.equal(await c.setIfAbsent('task', { by: 7 }), true, 'a deleted key can be claimed again');
  t.equal(await c.setIfAbsent('brief', { by: 1 }, 50), true);
  t.equal(await c.setIfAbsent('brief', { by: 2 }, 50), false);
  await new Promise((r) => setTimeout(r, 120));
  t.equal(await c.setIfAbsent('brief', { by: 3 }), true, 'an expired claim is free');
  t.same(await c.get('brief'), { by: 3 });
  t.same(
    (await collect(c.entries())).map(([k]) => k).sort(),
    ['brief', 'task'],
    'claims are listed like other entries',
  );
  await c.clear();
}

/** Collection names that are prefixes of each other, or glob characters, stay separate. */
export async function prefixIsolation(t: Test, store: Store) {
  const p = store.collection<number>('p');
  const pq = store.collection<number>('p:q');
  const star = store.collection<number>('*');
  await p.set('q:k', 1);
  await pq.set('k', 2);
  await star.set('k', 3);
  t.same(await collect(p.entries()), [['q:k', 1]], "'p' does not list the keys of 'p:q'");
  t.same(await collect(pq.entries()), [['k', 2]]);
  t.equal(await p.get('q:k'), 1);
  t.equal(await pq.get('k'), 2, "'p:q' / 'k' and 'p' / 'q:k' are different entries");
  await star.clear();
  t.equal(await p.get('q:k'), 1, "clearing '*' leaves other collections alone");
  t.equal(await pq.get('k'), 2);
  t.equal(await star.get('k'), undefined);
  await p.clear();
  t.equal(await pq.get('k'), 2, "clearing 'p' leaves 'p:q' alone");
  await pq.clear();
}
