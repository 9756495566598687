import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, type Store } from '../../core/store.ts';
import { tempDir } from '../helpers/app.ts';

const WRITER = fileURLToPath(new URL('../fixtures/store-writer.ts', import.meta.url));

async function collect<T>(it: AsyncIterable<[string, T]>): Promise<Array<[string, T]>> {
  const out: Array<[string, T]> = [];
  for await (const e of it) out.push(e);
  return out;
}

/** The collection contract, run against every backend that is up. */
async function contract(t: Test, store: Store) {
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
  t.same((await collect(a.entries())).sort(), [['one', { n: 1 }], ['two', { n: 2 }]], 'entries of one collection only');
  t.equal(await a.delete('one'), true);
  t.equal(await a.delete('one'), false, 'deleting twice says it was not there');
  await a.set('short', { n: 3 }, 50);
  t.same(await a.get('short'), { n: 3 });
  await new Promise((r) => setTimeout(r, 120));
  t.equal(await a.get('short'), undefined, 'a TTL expires');
  t.notOk((await collect(a.entries())).some(([k]) => k === 'short'), 'expired entries are not listed');
  await a.clear();
  t.same(await collect(a.entries()), [], 'clear empties the collection');
  t.same(await b.get('one'), { n: 100 }, 'and only that collection');
  t.equal(await store.healthcheck(), 'ok');
}

t.test('memory backend', async (t) => {
  const store = await openStore({ backend: 'memory' });
  t.teardown(() => store.close());
  await contract(t, store);
});

t.test('sqlite backend: the default, a file under DATA_DIR, durable across reopen', async (t) => {
  const dir = tempDir();
  const store = await openStore({ backend: 'sqlite', dataDir: dir });
  await contract(t, store);
  t.equal(store.location, join(dir, 'switchboard.db'));
  t.ok(existsSync(join(dir, 'switchboard.db')));
  await store.collection('keep').set('k', { v: 'still here' });
  await store.close();
  const again = await openStore({ backend: 'sqlite', dataDir: dir });
  t.teardown(() => again.close());
  t.same(await again.collection('keep').get('k'), { v: 'still here' });
});

t.test('sqlite: every acknowledged write survives kill -9', async (t) => {
  const dir = tempDir();
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let lastAck = -1;
  let buf = '';
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited early (${code})`))));
    child.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines) if (l.startsWith('ack ')) lastAck = Number(l.slice(4));
      // Kill mid-stream, while writes are still in flight.
      if (lastAck >= 300 && child.signalCode === null) child.kill('SIGKILL');
    });
  });
  t.ok(lastAck >= 300, `the writer acknowledged ${lastAck + 1} writes before it was killed`);
  const store = await openStore({ backend: 'sqlite', dataDir: dir });
  t.teardown(() => store.close());
  const c = store.collection<{ i: number }>('durability');
  const keys = Array.from({ length: lastAck + 1 }, (_, i) => `k${i}`);
  const values = await c.getMany(keys);
  const lost = keys.filter((_, i) => values[i]?.i !== i);
  t.same(lost, [], 'no acknowledged key is missing');
});
