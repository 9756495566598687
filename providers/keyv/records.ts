import { randomUUID } from 'node:crypto';
import { badRequest, unavailable } from '../../core/errors.ts';
import type { LlmProvider } from '../../core/primitives/llm.ts';
import type { ListPage, MemoryRecord, SearchHit, SearchRequest, StoreRequest } from '../../core/primitives/memory.ts';
import type { Collection, Store } from '../../core/store.ts';
import { enc } from './ids.ts';
import { scanAll } from './scan.ts';
import { fuse, NamespaceIndex } from './search-index.ts';

/**
 * Key-value records per namespace on the core store, with a search index per
 * namespace kept in memory.
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
 */
export class RecordStore {
  private readonly indexes = new Map<string, NamespaceIndex>();
  private readonly building = new Map<string, { version: string; promise: Promise<NamespaceIndex> }>();
  private readonly versions: Collection<string>;
  private readonly namespaceList: Collection<{ created_at: string }>;
  private readonly vectors = new Map<string, Map<string, number[]>>();

  constructor(
    private readonly store: Store,
    private readonly prefix: string,
    private readonly embedder?: () => LlmProvider | undefined,
  ) {
    this.versions = store.collection(`${prefix}:ns-version`);
    this.namespaceList = store.collection(`${prefix}:namespaces`);
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
    if (index) index.version = v;
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
    index?.put(record);
    await this.bump(ns, index);
    return record;
  }

  get(ns: string, key: string): Promise<MemoryRecord | undefined> {
    return this.col(ns).get(key);
  }

  async list(ns: string, page: ListPage): Promise<{ records: MemoryRecord[]; total: number }> {
    // The namespace index already holds every record (and is checked against the store's version).
    // Newest first: what a person browsing memory expects to see on page one (order cached until the next change).
    const all = (await this.index(ns)).byRecency();
    return { records: all.slice(page.offset, page.offset + page.limit), total: all.length };
  }

  async delete(ns: string, key: string): Promise<boolean> {
    const gone = await this.col(ns).delete(key);
    if (gone) {
      await this.vecCol(ns).delete(key);
      this.vectors.get(ns)?.delete(key);
      const index = await this.currentIndex(ns);
      index?.remove(key);
      await this.bump(ns, index);
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
    // Requests that arrive while a namespace is being indexed (seconds at 100,000
    // records) wait for that build instead of starting their own.
    const pending = this.building.get(ns);
    if (pending && pending.version === version) return pending.promise;
    const promise = (async () => {
      const index = new NamespaceIndex(version);
      for (const [, r] of await scanAll(this.col(ns))) index.put(r);
      // A write during the build bumped the version: this index is kept but the next read rebuilds.
      this.indexes.set(ns, index);
      this.vectors.delete(ns);
      return index;
    })().finally(() => {
      if (this.building.get(ns)?.promise === promise) this.building.delete(ns);
    });
    this.building.set(ns, { version, promise });
    return promise;
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
    if (!embedder?.embed) return lexical.slice(0, topK);
    const [qvec] = await this.embed(embedder, query);
    const semantic = index.rankByVector(qvec, await this.vectorsOf(ns), topK * 2, req.filters);
    return fuse(lexical, semantic, topK);
  }
}
