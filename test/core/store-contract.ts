import type { Test } from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
  await increment(t, store);
  await setMany(t, store);
}

/** setMany, where a backend offers it: every entry written in one call, readable one by one, beside the others. */
export async function setMany(t: Test, store: Store) {
  const c = store.collection<{ n: number }>('batched');
  if (!c.setMany) {
    t.equal(store.backend, 'memory', 'only the in-process store leaves setMany out (callers fall back to set)');
    return;
  }
  await c.clear();
  await c.set('kept', { n: 0 });
  await c.setMany([]);
  await c.setMany(Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: { n: i } })));
  t.same(
    await c.getMany(['k0', 'k49', 'kept']),
    [{ n: 0 }, { n: 49 }, { n: 0 }],
    'a batch lands beside what was there',
  );
  t.equal((await collect(c.entries())).length, 51, 'every entry of the batch is listed');
  await c.setMany([{ key: 'k1', value: { n: 101 } }]);
  t.same(await c.get('k1'), { n: 101 }, 'a batch overwrites like set');
  await c.clear();
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

/** increment: gapless, one value per call under concurrency, readable by get(), refused on a non-counter. */
export async function increment(t: Test, store: Store) {
  const c = store.collection<unknown>('counters');
  await c.clear();
  t.equal(await c.increment('gen'), 1, 'an absent counter starts at 1');
  t.equal(await c.increment('gen'), 2);
  t.equal(await c.get('gen'), 2, 'get() reads the number');
  const many = await Promise.all(Array.from({ length: 40 }, () => c.increment('gen')));
  t.same(
    [...many].sort((x, y) => x - y),
    Array.from({ length: 40 }, (_, i) => i + 3),
    'forty concurrent increments each get their own value, no gaps',
  );
  t.equal(await c.get('gen'), 42);
  t.equal(await store.collection<number>('counters-other').increment('gen'), 1, 'counters are per collection');
  await c.set('plain', 10);
  t.equal(await c.increment('plain'), 11, 'a number written by set() is a counter');
  await c.set('short', 5, 50);
  await new Promise((r) => setTimeout(r, 120));
  t.equal(await c.increment('short'), 1, 'an expired entry counts as 0');
  await new Promise((r) => setTimeout(r, 120));
  t.equal(await c.get('short'), 1, 'the counter it becomes has no TTL');
  await c.set('word', 'seven');
  await c.set('half', 1.5);
  for (const key of ['word', 'half']) {
    const err = await c.increment(key).then(
      () => undefined,
      (e: Error) => e,
    );
    t.equal(err?.name, 'NotACounter', `a key holding ${JSON.stringify(await c.get(key))} is refused, not a 503`);
  }
  t.equal(await c.get('word'), 'seven', 'and left as it was');
  t.equal(await c.delete('gen'), true);
  t.equal(await c.increment('gen'), 1, 'a deleted counter starts over');
  await c.clear();
  await store.collection('counters-other').clear();
}

/** Two handles on one backend (two processes' worth of clients): every value is handed out exactly once. */
export async function incrementAcross(t: Test, a: Store, b: Store) {
  const [ca, cb] = [a.collection<number>('counters-shared'), b.collection<number>('counters-shared')];
  await ca.clear();
  const got = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? ca : cb).increment('gen')));
  t.same(
    [...got].sort((x, y) => x - y),
    Array.from({ length: 60 }, (_, i) => i + 1),
    'sixty increments split over two handles: 1..60, each once',
  );
  t.equal(await cb.get('gen'), 60);
  t.equal(await ca.get('gen'), 60);
  await ca.clear();
}

const INCREMENTER = fileURLToPath(new URL('../fixtures/store-incrementer.ts', import.meta.url));

/** Starts the incrementer child: increments of one counter for `windowMs` once it is told to go. */
function incrementer(target: string[], windowMs: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', INCREMENTER, ...target, String(windowMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  let markReady: () => void;
  const ready = new Promise<void>((r) => (markReady = r));
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith('ready\n')) markReady();
  });
  const values = new Promise<number[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(out.trim().split('\n').slice(1).map(Number))
        : reject(new Error(`incrementer exited ${code}`)),
    );
  });
  return { ready, go: () => child.stdin.end('go\n'), values };
}

/**
 * Two processes incrementing one counter at once (`target` is the backend and
 * its SQLite directory or Redis URL), for the same time window: the union of
 * what they got is 1..total with no value twice, and each saw its own values
 * rise. Returns the total.
 */
export async function incrementAcrossProcesses(t: Test, target: string[], windowMs = 400): Promise<number> {
  const children = [incrementer(target, windowMs), incrementer(target, windowMs)];
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.go();
  const [x, y] = await Promise.all(children.map((c) => c.values));
  const total = x!.length + y!.length;
  t.ok(x!.length > 0 && y!.length > 0, 'both processes incremented');
  t.same(
    [...x!, ...y!].sort((p, q) => p - q),
    Array.from({ length: total }, (_, i) => i + 1),
    `${total} increments from two processes: 1..${total}, each once`,
  );
  t.ok(
    x!.some((v, i) => i > 0 && v !== x![i - 1]! + 1),
    'the processes really overlapped (the first got gaps where the second took values)',
  );
  t.ok(
    [x!, y!].every((vals) => vals.every((v, i) => i === 0 || v > vals[i - 1]!)),
    "each process's values rise",
  );
  return total;
}
