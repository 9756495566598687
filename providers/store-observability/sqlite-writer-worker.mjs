/**
 * The observability store's background writer (sqlite-writer.ts starts it): a
 * worker thread with its own connection to the provider's SQLite file, writing
 * each batch it is sent in one transaction and answering when it is committed,
 * running retention sweeps and the list queries.
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

/**
 * Retention for one collection (its key range), in SQL on this thread: records older than the cutoff, then the
 * oldest beyond `max` by (time, seq), newest kept, as retention.ts does in JavaScript for the other stores.
 * Read and sorted in SQLite's C, a sweep no longer parses every record on the thread that serves requests.
 */
const count = db.prepare('SELECT count(*) AS n FROM keyv WHERE key >= ? AND key < ?');
const dropOld = db.prepare("DELETE FROM keyv WHERE key >= ? AND key < ? AND json_extract(value, '$.value.t') < ?");
const dropBeyond = db.prepare(
  `DELETE FROM keyv WHERE key IN (SELECT key FROM keyv WHERE key >= ? AND key < ?
     ORDER BY json_extract(value, '$.value.t') DESC, json_extract(value, '$.value.seq') DESC LIMIT -1 OFFSET ?)`,
);
/** One transaction per collection: the write lock is never held for the whole sweep. */
const sweepRange = db.transaction((lo, hi, cutoff, max) => {
  let deleted = cutoff === null ? 0 : dropOld.run(lo, hi, cutoff).changes;
  if (count.get(lo, hi).n > max) deleted += dropBeyond.run(lo, hi, max).changes;
  return deleted;
});

/** Reads sent by the request thread (sql-list.ts): run here so a scan of a large collection never blocks it. */
const queries = new Map();
function query(sql, params) {
  let stmt = queries.get(sql);
  if (!stmt) queries.set(sql, (stmt = db.prepare(sql)));
  return stmt.all(...params);
}

parentPort.on('message', (msg) => {
  if (msg.close) {
    db.close();
    parentPort.postMessage({ id: msg.id });
    parentPort.close();
    return;
  }
  try {
    if (msg.query) {
      parentPort.postMessage({ id: msg.id, rows: query(msg.query.sql, msg.query.params) });
      return;
    }
    if (msg.sweep) {
      let deleted = 0;
      for (const [lo, hi] of msg.sweep.ranges) deleted += sweepRange(lo, hi, msg.sweep.cutoff, msg.sweep.max);
      parentPort.postMessage({ id: msg.id, deleted });
      return;
    }
    write(msg.rows);
    parentPort.postMessage({ id: msg.id });
  } catch (err) {
    parentPort.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  }
});
