import { randomUUID } from 'node:crypto';
import type { Collection, Store } from '../../core/store.ts';
import type { Bm25Index } from './bm25-index.ts';
import { enc } from './ids.ts';
import { decodeIndex, encodeIndex, SNAPSHOT_FORMAT, yieldToLoop } from './index-snapshot.ts';

/** Bytes per stored chunk: a value well under what SQLite rows and Redis strings take comfortably, written one at a time. */
const CHUNK_BYTES = 1 << 20;

/** What a namespace's snapshot is: written after its chunks, so a manifest never names chunks that are not there yet. */
export interface SnapshotManifest {
  format: string;
  /** The namespace version (the replicas' version key) the snapshot reflects. */
  version: string;
  /** Names this snapshot's chunks, so a newer one never overwrites chunks a reader is fetching. */
  id: string;
  chunks: number;
  bytes: number;
  records: number;
}

/**
 * Index snapshots on the core store: per namespace a manifest under
 * `<prefix>:index-snapshot` and base64 chunks under `<prefix>:index-chunk:<ns>`.
 * A snapshot is used only when its version equals the namespace's version key,
 * so a stale one (any write since) is never loaded: the caller rebuilds.
 */
export class SnapshotStore {
  private readonly manifests: Collection<SnapshotManifest>;

  constructor(
    private readonly store: Store,
    private readonly prefix: string,
  ) {
    this.manifests = store.collection<SnapshotManifest>(`${prefix}:index-snapshot`);
  }

  private chunks(ns: string): Collection<string> {
    return this.store.collection<string>(`${this.prefix}:index-chunk:${enc(ns)}`);
  }

  /** The index for `version`, or undefined when there is no snapshot of that version (or its chunks are gone). */
  async load(
    ns: string,
    version: string,
    normalise: (t: string) => string | null,
  ): Promise<{ index: Bm25Index; manifest: SnapshotManifest } | undefined> {
    const m = await this.manifests.get(ns);
    if (!m || m.format !== SNAPSHOT_FORMAT || m.version !== version) return undefined;
    const parts = await this.chunks(ns).getMany(Array.from({ length: m.chunks }, (_, i) => chunkKey(m.id, i)));
    if (parts.some((p) => typeof p !== 'string')) return undefined; // replaced while we read: rebuild instead
    const bytes = Buffer.concat(parts.map((p) => Buffer.from(p as string, 'base64')));
    if (bytes.length !== m.bytes) return undefined;
    return { index: await decodeIndex(bytes, normalise), manifest: m };
  }

  /**
   * Writes `index` as the snapshot of `version`; false when the index changed while
   * it was being encoded (nothing is written then). Chunks first, manifest last, then
   * the previous snapshot's chunks are deleted.
   */
  async save(ns: string, version: string, index: Bm25Index): Promise<boolean> {
    const bytes = await encodeIndex(index);
    if (!bytes) return false;
    const id = randomUUID();
    const col = this.chunks(ns);
    const chunks = Math.ceil(bytes.length / CHUNK_BYTES);
    for (let i = 0; i < chunks; i++) {
      await col.set(chunkKey(id, i), bytes.toString('base64', i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
      await yieldToLoop();
    }
    const previous = await this.manifests.get(ns);
    await this.manifests.set(ns, {
      format: SNAPSHOT_FORMAT,
      version,
      id,
      chunks,
      bytes: bytes.length,
      records: index.size,
    });
    if (previous && previous.id !== id) {
      for (let i = 0; i < previous.chunks; i++) await col.delete(chunkKey(previous.id, i));
    }
    return true;
  }

  manifest(ns: string): Promise<SnapshotManifest | undefined> {
    return this.manifests.get(ns);
  }
}

const chunkKey = (id: string, i: number) => `${id}:${String(i).padStart(6, '0')}`;
