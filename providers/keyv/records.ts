import { randomUUID } from 'node:crypto';
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
 * Replicas sharing one Redis: every write bumps the namespace's version key
 * (a fresh UUID); a read first fetches that key (one round trip) and rebuilds
 * its index when the version is not the one its index reflects. A write
 * applies itself to the local index only when the index was current just
 * before the write; otherwise it drops the index, so a replica's own write can
 * never make an index that missed another replica's write look current. The
 * store has no compare-and-set, so one narrow race remains: two replicas
 * writing the same namespace within one store round trip of each other can
 * leave the last writer's index without the other's record until the next
 * write from elsewhere or a restart.
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
  private readonly versions: Collection<string>;
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
    this.versions = store.collection(`${prefix}:ns-version`);
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

  private async bump(ns: string, index?: NamespaceIndex): Promise<void> {
    const v = randomUUID();
    await this.versions.set(ns, v);
    if (index) {
      index.version = v;
      this.scheduleSnapshot(ns, SNAPSHOT_DEBOUNCE_MS);
    }
  }

  async put(ns: string, req: StoreRequest): Promise<MemoryRecord> {
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
    const index = await this.currentIndex(ns);
    // The store's previous content is what the index holds for the key (the index was current).
    index?.put(record, existing?.content);
    await this.bump(ns, index);
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

  async delete(ns: string, key: string): Promise<boolean> {
    const col = this.col(ns);
    // Read first: its content names the postings the index must release.
    const old = await col.get(key);
    const gone = await col.delete(key);
    if (gone) {
      await this.vecCol(ns).delete(key);
      this.vectors.get(ns)?.delete(key);
      const index = await this.currentIndex(ns);
      if (index) {
        if (old) index.remove(key, old.content);
        else this.indexes.delete(ns); // deleted by someone else between our read and delete: rebuild
      }
      await this.bump(ns, this.indexes.get(ns) === index ? index : undefined);
    }
    return gone;
  }

  async namespaces(): Promise<string[]> {
    const out: string[] = [];
    for (const [ns] of await scanAll(this.namespaceList)) out.push(ns);
    return out.sort();
  }

  /** The cached index if it reflects the store's current version; a stale one is dropped (rebuilt on the next read). */
  private async currentIndex(ns: string): Promise<NamespaceIndex | undefined> {
    const index = this.indexes.get(ns);
    if (!index) return undefined;
    if (index.version === ((await this.versions.get(ns)) ?? '')) return index;
    this.indexes.delete(ns);
    this.vectors.delete(ns);
    return undefined;
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
    const version = (await this.versions.get(ns)) ?? '';
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
      // A write during the build bumps the version: this index is then kept but the next read rebuilds.
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
      if (((await this.versions.get(ns)) ?? '') !== version) return; // stale: whoever is current saves
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
