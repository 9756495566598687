import t from 'tap';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BackgroundWriter } from '../../providers/store-observability/sqlite-writer.ts';
import { tempDir } from '../helpers/app.ts';

const count = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM keyv').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

t.test('the writer thread commits a batch before it answers, in keyv envelopes', async (t) => {
  const file = join(tempDir(), 'observability.db');
  const w = new BackgroundWriter(file, undefined);
  t.teardown(() => w.close());
  await w.write([
    ['ns:a', '{"n":1}', '2026-01-01T00:00:00.000Z', 's1'],
    ['ns:b', '{"n":2}', '2026-01-01T00:00:00.001Z', 's2'],
  ]);
  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  const rows = db.prepare('SELECT key, value FROM keyv ORDER BY key').all() as Array<{ key: string; value: string }>;
  t.same(
    rows.map((r) => [r.key, JSON.parse(r.value)]),
    [
      ['ns:a', { value: { j: '{"n":1}', t: '2026-01-01T00:00:00.000Z', seq: 's1' } }],
      ['ns:b', { value: { j: '{"n":2}', t: '2026-01-01T00:00:00.001Z', seq: 's2' } }],
    ],
  );
});

t.test('a batch SQLite refuses is refused whole, and the writer goes on', async (t) => {
  const file = join(tempDir(), 'observability.db');
  const w = new BackgroundWriter(file, undefined);
  t.teardown(() => w.close());
  await t.rejects(
    // A null key breaks the primary key's NOT NULL: the transaction is rolled back, the first row too.
    w.write([
      ['ns:ok', '{}', 't', 's'],
      [null as unknown as string, '{}', 't', 's'],
    ]),
    /observability store write failed: NOT NULL constraint failed/,
  );
  t.equal(count(file), 0, 'nothing of the refused batch is written');
  await w.write([['ns:next', '{}', 't', 's']]);
  t.equal(count(file), 1, 'the next batch is written');
});

t.test('a writer whose thread has stopped starts another on the next batch', async (t) => {
  const file = join(tempDir(), 'observability.db');
  const w = new BackgroundWriter(file, undefined);
  t.teardown(() => w.close());
  await w.write([['ns:1', '{}', 't', 's']]);
  await w.close(); // the thread is gone
  await w.write([['ns:2', '{}', 't', 's']]);
  t.equal(count(file), 2, 'written by a new thread');
});
