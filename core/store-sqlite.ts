import { EventEmitter } from 'node:events';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { counterIn } from './store-value.ts';

/**
 * A keyv storage adapter on an embedded SQLite file.
 *
 * WAL journal with synchronous=NORMAL: a committed write is in the WAL before
 * `set` resolves, so it survives the process being killed (kill -9); only a
 * power loss could drop the last transactions, which is the usual trade for an
 * embedded default.
 */
export class SqliteFile {
  readonly db: Database.Database;
  readonly file: string;
  readonly stmts: {
    get: Database.Statement<[string], { value: string } | undefined>;
    set: Database.Statement<[string, string]>;
    del: Database.Statement<[string]>;
    clearNs: Database.Statement<[string, string]>;
    scanFirst: Database.Statement<[string, string, number], { key: string; value: string }>;
    scanAfter: Database.Statement<[string, string, number], { key: string; value: string }>;
  };

  constructor(file: string) {
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true });
      // The store holds credentials (encrypted) and tokens' state: owner-only, as the key files are.
      // SQLite gives its -wal and -shm files the database file's mode; a file made by an older
      // version (0644) is tightened too.
      closeSync(openSync(file, 'a', 0o600));
      chmodSync(file, 0o600);
    }
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    for (const side of ['-wal', '-shm'])
      if (file !== ':memory:' && existsSync(file + side)) chmodSync(file + side, 0o600);
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    // A page cache of up to 64 MiB (SQLite's default is 2 MiB): past a few MiB of data every write missed the
    // cache for the B-tree pages it updates (observability's batch insert cost 13 us per record with the
    // default, 4-5 us with this; bench/RESULTS.md). The cache grows only as pages are read.
    this.db.pragma('cache_size = -65536');
    this.db.exec('CREATE TABLE IF NOT EXISTS keyv (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID');
    this.file = file;
    this.stmts = {
      get: this.db.prepare('SELECT value FROM keyv WHERE key = ?'),
      set: this.db.prepare(
        'INSERT INTO keyv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      ),
      del: this.db.prepare('DELETE FROM keyv WHERE key = ?'),
      clearNs: this.db.prepare('DELETE FROM keyv WHERE key >= ? AND key < ?'),
      // Range scans on the primary key, `ns:` <= key < `ns;` (';' sorts right after ':'),
      // one page at a time: the first page from the range start, each next one after the last key seen.
      scanFirst: this.db.prepare('SELECT key, value FROM keyv WHERE key >= ? AND key < ? ORDER BY key LIMIT ?'),
      scanAfter: this.db.prepare('SELECT key, value FROM keyv WHERE key > ? AND key < ? ORDER BY key LIMIT ?'),
    };
  }

  /**
   * Insert unless a live entry holds the key, in one IMMEDIATE transaction:
   * the write lock is taken before the read, so two processes on one file
   * cannot both see the key free. An entry whose keyv `expires` has passed
   * counts as absent (keyv would read it as a miss).
   */
  insertIfAbsent(key: string, serialized: string): boolean {
    const tx = this.db.transaction(() => {
      const row = this.stmts.get.get(key);
      if (row) {
        let expires: unknown;
        try {
          expires = (JSON.parse(row.value) as { expires?: unknown }).expires;
        } catch {
          expires = undefined;
        }
        if (typeof expires !== 'number' || expires > Date.now()) return false;
      }
      this.stmts.set.run(key, serialized);
      return true;
    });
    return tx.immediate();
  }

  /**
   * Add one to the counter in keyv's envelope, in one IMMEDIATE transaction
   * (the write lock before the read, as insertIfAbsent): two processes on one
   * file each get their own value.
   */
  increment(key: string): number {
    const tx = this.db.transaction(() => {
      const row = this.stmts.get.get(key);
      const n = (row ? counterIn(key, row.value) : 0) + 1;
      this.stmts.set.run(key, JSON.stringify({ value: n }));
      return n;
    });
    return tx.immediate();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** Rows per scan page: large enough that a 100,000-record index build is 200 queries, small enough to hold briefly. */
export const SCAN_PAGE = 500;

/**
 * One adapter per keyv namespace: keyv writes its namespace onto the adapter,
 * so adapters cannot be shared between collections; the file handle is.
 */
export class SqliteKeyvAdapter extends EventEmitter {
  // keyv only builds an iterator for adapters whose dialect it knows.
  readonly opts: { dialect: 'sqlite'; url: string };
  namespace?: string;
  private readonly stmts: SqliteFile['stmts'];
  private readonly sqlite: SqliteFile;

  constructor(sqlite: SqliteFile) {
    super();
    this.sqlite = sqlite;
    this.stmts = sqlite.stmts;
    this.opts = { dialect: 'sqlite', url: `sqlite://${sqlite.file}` };
  }

  async get(key: string): Promise<string | undefined> {
    return this.stmts.get.get(key)?.value;
  }

  async getMany(keys: string[]): Promise<Array<string | undefined>> {
    return keys.map((k) => this.stmts.get.get(k)?.value);
  }

  async set(key: string, value: unknown): Promise<void> {
    this.stmts.set.run(key, typeof value === 'string' ? value : JSON.stringify(value));
  }

  async setMany(values: Array<{ key: string; value: unknown }>): Promise<void> {
    const tx = this.sqlite.db.transaction((rows: Array<{ key: string; value: unknown }>) => {
      for (const r of rows) this.stmts.set.run(r.key, typeof r.value === 'string' ? r.value : JSON.stringify(r.value));
    });
    tx(values);
  }

  async delete(key: string): Promise<boolean> {
    return this.stmts.del.run(key).changes > 0;
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    let any = false;
    for (const k of keys) any = this.stmts.del.run(k).changes > 0 || any;
    return any;
  }

  async has(key: string): Promise<boolean> {
    return this.stmts.get.get(key) !== undefined;
  }

  async clear(): Promise<void> {
    if (this.namespace) this.stmts.clearNs.run(`${this.namespace}:`, `${this.namespace};`);
    else this.sqlite.db.exec('DELETE FROM keyv');
  }

  /**
   * Keyset pagination with `.all()`, never a statement left open across a
   * `yield`: better-sqlite3 refuses every other use of a statement (and any
   * write on the connection) while one is mid-iteration, so two interleaved
   * scans, or a write while a scan's consumer awaits, used to fail with
   * "This statement is busy executing a query". Between pages the scan holds
   * nothing; a key written behind the cursor is not seen, one written ahead of
   * it is (no snapshot, as with Redis SCAN).
   */
  async *iterator(namespace?: string): AsyncGenerator<[string, string]> {
    const lo = namespace ? `${namespace}:` : '';
    const hi = namespace ? `${namespace};` : '\uffff';
    let rows = this.stmts.scanFirst.all(lo, hi, SCAN_PAGE);
    while (rows.length > 0) {
      for (const row of rows) yield [row.key, row.value];
      if (rows.length < SCAN_PAGE) return;
      rows = this.stmts.scanAfter.all(rows[rows.length - 1].key, hi, SCAN_PAGE);
    }
  }

  async disconnect(): Promise<void> {
    // The file is shared by every collection; the store closes it once.
  }
}
