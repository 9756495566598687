import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../core/store.ts';
import { contract, incrementAcross, incrementAcrossProcesses } from './store-contract.ts';
import { tempDir } from '../helpers/app.ts';

const WRITER = fileURLToPath(new URL('../fixtures/store-writer.ts', import.meta.url));

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
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited early (${code})`)),
    );
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

t.test('sqlite set-if-absent across two handles on one file (two processes sharing DATA_DIR)', async (t) => {
  const dir = tempDir();
  const a = await openStore({ backend: 'sqlite', dataDir: dir });
  const b = await openStore({ backend: 'sqlite', dataDir: dir });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const claims = [a, b].map((s) => s.collection<{ by: string }>('claims'));
  const won = await Promise.all(
    claims.flatMap((c, i) => [c.setIfAbsent('run/t1', { by: `s${i}` }), c.setIfAbsent('run/t1', { by: `s${i}` })]),
  );
  t.equal(won.filter(Boolean).length, 1, 'one claim wins across both handles');
  t.same(await claims[1]!.get('run/t1'), await claims[0]!.get('run/t1'), 'both handles read the winner');
});

t.test('sqlite increment across two handles and two processes on one file', async (t) => {
  const dir = tempDir();
  const a = await openStore({ backend: 'sqlite', dataDir: dir });
  const b = await openStore({ backend: 'sqlite', dataDir: dir });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  await incrementAcross(t, a, b);
  const total = await incrementAcrossProcesses(t, ['sqlite', dir]);
  t.equal(await a.collection('counters-processes').get('gen'), total, 'the file holds the last value');
});
