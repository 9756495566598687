import { badRequest, unavailable } from '../../core/errors.ts';
import type { LlmProvider } from '../../core/primitives/llm.ts';
import type { ListPage, MemoryRecord, SearchHit, SearchRequest, StoreRequest } from '../../core/primitives/memory.ts';
import type { Collection, Store } from '../../core/store.ts';
import { enc } from './ids.ts';
import { scanAll } from './scan.ts';
import { yieldToLoop } from './index-snapshot.ts';
import { fuse, NamespaceIndex, normaliseTerm } from './search-index.ts';
import { type SnapshotManifest, SnapshotStore } from './snapshot-store.ts';

/** Work between two yields while indexing records, so a build never holds other requests up for long. */
const BUILD_SLICE_MS = 4;
/**
 * Namespaces smaller than this get no snapshot: they rebuild from their records in a few milliseconds,
 * and a snapshot would only add writes (and background work after every burst of them).
 */
export const SNAPSHOT_MIN_RECORDS = 1000;
/** The longest a provider's close waits for pending snapshots to be written. */
const FLUSH_TIMEOUT_MS = 10_000;
/** Quiet time after the last write before a namespace's snapshot is rewritten (a burst of writes costs one). */
const SNAPSHOT_DEBOUNCE_MS = 2000;

interface Build {
  version: string;
  promise: Promise<NamespaceIndex>;
}

/**
 * Key-value records per namespace on the core store, with a search index per
 * namespace kept in memory (keys, lengths and postings: no content, see
 * search-index.ts), persisted as a snapshot on durable stores.
 *
 * Replicas sharing one Redis: every write stores its record, then increments
 * the namespace's counter under `<prefix>:ns-counter` (Collection.increment,
 * atomic on every backend), and an index's `version` is the counter value (as
 * a string) it reflects: it holds every write whose increment is <= version.
 * A read first fetches the counter (one round trip) and rebuilds when it is
 * not the index's version. A write applies itself to the local index only
 * when its increment returned exactly version + 1 (no other write counted in
 * between) and the index is the same one that was there when the write began
 * (not one a build swapped in meanwhile, whose scan may already hold the new
 * record); otherwise the index is dropped unless its version is already >= the
 * write's (built after it), and the next read rebuilds. With a random id per
 * write, as before (issue 25/26), the later of two replicas writing within one
 * round trip took its own id for current and never saw the other's record.
 * What remains: a write whose increment fails (store down: the caller gets a
 * 503) stored its record without counting it, so other replicas see it after
 * the next write; and an index can briefly hold a record another replica
 * stored but has not counted yet, until that count lands (a newer version, so
 * every replica rebuilds). The counter replaced the UUID key `<prefix>:ns-version`,
 * which is no longer read; snapshots written at a UUID version never match a
 * counter value, so each such namespace is rebuilt once and its snapshot rewritten.
 * (Replicas from before and after the counter use different keys and do not see
 * each other's writes: they are upgraded together.)
 * Writes to one key are run one after another within a process, so the
 * content a write reads as "previous" is what the index holds for the key.
 *
 * Building: an index is loaded from the namespace's snapshot when the snapshot's
 * version is the current one, else built from every record. Either way the work
 * runs in slices that yield to the event loop (setImmediate), so the first search
 * of a big cold namespace does not stall other requests; searches that arrive
 * meanwhile await that one build. After a build from records, and a few seconds
 * after the last write, the index is written back as the snapshot (durable stores only).
 */
export class RecordStore {
  private readonly indexes = new Map<string, NamespaceIndex>();
  private readonly building = new Map<string, Build>();
  private readonly versions: Collection<number>;
  private readonly namespaceList: Collection<{ created_at: string }>;
  private readonly vectors = new Map<string, Map<string, number[]>>();
  /** Undefined on the in-process store, where nothing outlives the process. */
  private readonly snapshots?: SnapshotStore;
  private readonly saveTimers = new Map<string, NodeJS.Timeout>();
  private readonly saving = new Map<string, Promise<void>>();
  /** The version each namespace's snapshot was last written (or loaded) at. */
  private readonly savedVersion = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly prefix: string,
    private readonly embedder?: () => LlmProvider | undefined,
  ) {
    // Not the old `ns-version` key (a random id per write): a counter cannot be added to those.
    this.versions = store.collection<number>(`${prefix}:ns-counter`);
    this.namespaceList = store.collection(`${prefix}:namespaces`);
    if (store.backend !== 'memory') this.snapshots = new SnapshotStore(store, prefix);
  }

  /** Per namespace, so a retrieve does not rebuild and re-encode the collection name (the store caches collections by name too). */
  private readonly cols = new Map<string, Collection<MemoryRecord>>();

  private col(ns: string): Collection<MemoryRecord> {
    let c = this.cols.get(ns);
    if (!c) this.cols.set(ns, (c = this.store.collection<MemoryRecord>(`${this.prefix}:rec:${enc(ns)}`)));
    return c;
  }

  private vecCol(ns: string): Collection<number[]> {
    return this.store.collection<number[]>(`${this.prefix}:vec:${enc(ns)}`);
  }

  /** This process's writes in flight per namespace and key (see serial()). */
  private readonly keyQueues = new Map<string, Promise<unknown>>();

  /**
   * Runs writes to one key of one namespace one after another: two concurrent
   * writes to a key would both read the same previous content, and the second
   * would release postings the index no longer holds.
   */
  private serial<T>(ns: string, key: string, fn: () => Promise<T>): Promise<T> {
    const id = `${enc(ns)}\u0000${key}`;
    const run = (this.keyQueues.get(id) ?? Promise.resolve()).then(fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.keyQueues.set(id, tail);
    void tail.then(() => {
      if (this.keyQueues.get(id) === tail) this.keyQueues.delete(id);
    });
    return run;
  }

  /** The version a namespace's index must carry to be current: the counter, as a string ('0' before any write). */
  private async currentVersion(ns: string): Promise<string> {
    return String((await this.versions.get(ns)) ?? 0);
  }

  /**
   * Counts a write (already stored) in the namespace's counter, then keeps the
   * local index current by applying the write to it, or drops it (see the class
   * comment). `before` is the index that was cached when the write began;
   * `apply` returns false when it cannot bring the index up to date.
   */
  private async bump(ns: string, before: NamespaceIndex | undefined, apply: (index: NamespaceIndex) => boolean) {
    let n: number;
    try {
      n = await this.versions.increment(ns);
    } catch (err) {
      this.drop(ns); // the record is stored but not counted: do not trust the index either
      throw err;
    }
    const index = this.indexes.get(ns);
    if (!index) return;
    const v = Number(index.version); // NaN for anything but a counter value: dropped
    if (index === before && v + 1 === n && apply(index)) {
      index.version = String(n);
      this.scheduleSnapshot(ns, SNAPSHOT_DEBOUNCE_MS);
    } else if (!(v >= n)) this.drop(ns);
  }

  private drop(ns: string): void {
    this.indexes.delete(ns);
    this.vectors.delete(ns);
  }

  put(ns: string, req: StoreRequest): Promise<MemoryRecord> {
    return this.serial(ns, req.key, () => this.putNow(ns, req));
  }

  private async putNow(ns: string, req: StoreRequest): Promise<MemoryRecord> {
    const before = this.indexes.get(ns);
    const now = new Date().toISOString();
    const col = this.col(ns);
    const existing = await col.get(req.key);
    const record: MemoryRecord = {
      namespace: ns,
      key: req.key,
      content: req.content,
      metadata: req.metadata ?? {},
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
    await col.set(req.key, record);
    if (!existing && (await this.namespaceList.get(ns)) === undefined)
      await this.namespaceList.set(ns, { created_at: now });
    const embedder = this.embedder?.();
    if (embedder?.embed) {
      const [vec] = await this.embed(embedder, `${req.key}\n${req.content}`);
      await this.vecCol(ns).set(req.key, vec);
      this.vectors.get(ns)?.set(req.key, vec);
    }
    // The store's previous content is what the index holds for the key (when the index is current).
    await this.bump(ns, before, (index) => {
      index.put(record, existing?.content);
      return true;
    });
    return record;
  }

  get(ns: string, key: string): Promise<MemoryRecord | undefined> {
    return this.col(ns).get(key);
  }

  /** Records for keys in order, read from the store; a key deleted since the index answered is skipped. */
  private async render<T>(ns: string, keys: string[], wrap: (r: MemoryRecord, i: number) => T): Promise<T[]> {
    if (!keys.length) return [];
    const got = await this.col(ns).getMany(keys);
    const out: T[] = [];
    got.forEach((r, i) => {
      if (r) out.push(wrap(r, i));
    });
    return out;
  }

  async list(ns: string, page: ListPage): Promise<{ records: MemoryRecord[]; total: number }> {
    // The namespace index knows every key and its update time (and is checked against the store's version).
    // Newest first: what a person browsing memory expects to see on page one (order cached until the next change).
    const index = await this.index(ns);
    const keys = index.keysByRecency().slice(page.offset, page.offset + page.limit);
    return { records: await this.render(ns, keys, (r) => r), total: index.size };
  }

  delete(ns: string, key: string): Promise<boolean> {
    return this.serial(ns, key, () => this.deleteNow(ns, key));
  }

  private async deleteNow(ns: string, key: string): Promise<boolean> {
    const before = this.indexes.get(ns);
    const col = this.col(ns);
    // Read first: its content names the postings the index must release.
    const old = await col.get(key);
    const gone = await col.delete(key);
    if (gone) {
      await this.vecCol(ns).delete(key);
      this.vectors.get(ns)?.delete(key);
      await this.bump(ns, before, (index) => {
        if (!old) return false; // written by someone else between our read and delete: rebuild
        index.remove(key, old.content);
        return true;
      });
    }
    return gone;
  }

  async namespaces(): Promise<string[]> {
    const out: string[] = [];
    for (const [ns] of await scanAll(this.namespaceList)) out.push(ns);
    return out.sort();
  }

  private async embed(llm: LlmProvider, text: string): Promise<number[][]> {
    try {
      return await llm.embed!([text]);
    } catch (err) {
      throw unavailable(
        'SB_ERR_MEMORY_EMBEDDINGS_DOWN',
        `The embeddings provider '${llm.name}' is unavailable: ${(err as Error).message}`,
        err,
      );
    }
  }

  private async index(ns: string): Promise<NamespaceIndex> {
    const version = await this.currentVersion(ns);
    const cached = this.indexes.get(ns);
    if (cached && cached.version === version) return cached;
    // Requests that arrive while a namespace is being indexed wait for that build instead of starting their own.
    const pending = this.building.get(ns);
    if (pending && pending.version === version) return pending.promise;
    const build: Build = { version, promise: undefined as unknown as Promise<NamespaceIndex> };
    build.promise = this.build(ns, build).finally(() => {
      if (this.building.get(ns) === build) this.building.delete(ns);
    });
    this.building.set(ns, build);
    return build.promise;
  }

  /** The index of `build.version`: from the snapshot when it is of that version, else from every record, in slices. */
  private async build(ns: string, build: Build): Promise<NamespaceIndex> {
    const loaded = await this.snapshots?.load(ns, build.version, normaliseTerm).catch(() => undefined);
    let index: NamespaceIndex;
    if (loaded) {
      index = new NamespaceIndex(build.version, loaded.index);
      this.savedVersion.set(ns, build.version);
    } else {
      index = new NamespaceIndex(build.version);
      let start = performance.now();
      let n = 0;
      // The version was read before this scan, so every write counted in it is seen. A write counted during
      // the scan leaves this index behind the counter: it is kept, but the next read rebuilds.
      for await (const [, r] of this.col(ns).entries()) {
        index.put(r);
        // The clock is read every 16 records: under load 256 records could already be tens of milliseconds.
        if ((++n & 15) === 0 && performance.now() - start > BUILD_SLICE_MS) {
          await yieldToLoop();
          start = performance.now();
        }
      }
      index.lexical.trim();
    }
    // A build of an older version that ends after a newer one started does not replace that one's result.
    if (this.building.get(ns) === build || !this.indexes.has(ns)) {
      this.indexes.set(ns, index);
      this.vectors.delete(ns);
    }
    if (!loaded) this.scheduleSnapshot(ns, 0);
    return index;
  }

  /** Writes the namespace's snapshot after `delayMs` (restarted by each call), unless it is current already. */
  private scheduleSnapshot(ns: string, delayMs: number): void {
    if (!this.snapshots || (this.indexes.get(ns)?.size ?? 0) < SNAPSHOT_MIN_RECORDS) return;
    clearTimeout(this.saveTimers.get(ns));
    const timer = setTimeout(() => {
      this.saveTimers.delete(ns);
      void this.saveSnapshot(ns);
    }, delayMs);
    timer.unref();
    this.saveTimers.set(ns, timer);
  }

  /** One save per namespace at a time; failures are left for the next save (the snapshot only saves work). */
  private saveSnapshot(ns: string): Promise<void> {
    const running = this.saving.get(ns);
    if (running) return running.then(() => this.saveSnapshot(ns));
    const p = (async () => {
      const index = this.indexes.get(ns);
      if (!index || !this.snapshots || this.savedVersion.get(ns) === index.version) return;
      const version = index.version;
      if ((await this.currentVersion(ns)) !== version) return; // stale: whoever is current saves
      if (await this.snapshots.save(ns, version, index.lexical)) this.savedVersion.set(ns, version);
      else if (this.indexes.get(ns) === index) this.scheduleSnapshot(ns, SNAPSHOT_DEBOUNCE_MS); // changed meanwhile
    })()
      .catch(() => undefined)
      .finally(() => {
        if (this.saving.get(ns) === p) this.saving.delete(ns);
      });
    this.saving.set(ns, p);
    return p;
  }

  /**
   * Writes every pending snapshot now (provider close: a restart then loads instead of rebuilding). Bounded
   * in time, so a store that stopped answering cannot hold up shutdown: a snapshot only saves work.
   */
  async flush(timeoutMs = FLUSH_TIMEOUT_MS): Promise<void> {
    const pending = [...this.saveTimers.keys()];
    for (const ns of pending) clearTimeout(this.saveTimers.get(ns));
    this.saveTimers.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...pending.map((ns) => this.saveSnapshot(ns)), ...this.saving.values()]),
      new Promise<void>((r) => {
        timer = setTimeout(r, timeoutMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  /** The manifest of a namespace's persisted index (tests and benches: what a restart would load). */
  snapshotManifest(ns: string): Promise<SnapshotManifest | undefined> {
    return this.snapshots?.manifest(ns) ?? Promise.resolve(undefined);
  }

  private async vectorsOf(ns: string): Promise<Map<string, number[]>> {
    let v = this.vectors.get(ns);
    if (!v) {
      v = new Map();
      for (const [k, vec] of await scanAll(this.vecCol(ns))) v.set(k, vec);
      this.vectors.set(ns, v);
    }
    return v;
  }

  async search(ns: string, req: SearchRequest): Promise<SearchHit[]> {
    const query = req.query.trim();
    if (!query) throw badRequest('SB_ERR_MEMORY_EMPTY_QUERY', 'query must not be empty');
    const topK = req.top_k ?? 10;
    const index = await this.index(ns);
    const lexical = index.search(query, topK * 2, req.filters);
    const embedder = this.embedder?.();
    let ranked = lexical.slice(0, topK);
    if (embedder?.embed) {
      const [qvec] = await this.embed(embedder, query);
      const semantic = index.rankByVector(qvec, await this.vectorsOf(ns), topK * 2, req.filters);
      ranked = fuse(lexical, semantic, topK);
    }
    return this.render(
      ns,
      ranked.map((h) => h.key),
      (record, i) => ({ record, score: ranked[i].score }),
    );
  }
}
