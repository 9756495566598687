/**
 * The observability store's background writer (sqlite-writer.ts starts it): a
 * worker thread with its own connection to the provider's SQLite file, writing
 * each batch it is sent in one transaction and answering when it is committed.
 *
 * Plain JavaScript on purpose: a worker is a file node loads by itself, and
 * `npm start` runs without a TypeScript loader (the bundle in dist/ keeps
 * paths pointing at the source tree), so a .ts worker would not load there.
 * It needs nothing of the project but the table's shape and keyv's envelope.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
// The same settings as the core store's connections (core/store-sqlite.ts).
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -65536');
db.exec('CREATE TABLE IF NOT EXISTS keyv (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID');
const set = db.prepare(
  'INSERT INTO keyv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
);
/**
 * Rows arrive as [prefixed key, record JSON, time, seq]. The value is keyv's
 * envelope around the stored shape ({j, t, seq}, list.ts), as keyv's own
 * serialiser writes it for plain strings: none of the three starts with ':',
 * the one case where keyv's format differs from JSON.
 */
const write = db.transaction((rows) => {
  for (const [key, j, t, seq] of rows) set.run(key, JSON.stringify({ value: { j, t, seq } }));
});

parentPort.on('message', (msg) => {
  if (msg.close) {
    db.close();
    parentPort.postMessage({ id: msg.id });
    parentPort.close();
    return;
  }
  try {
    write(msg.rows);
    parentPort.postMessage({ id: msg.id });
  } catch (err) {
    parentPort.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  }
});
