import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import type { Collection, Store } from '../../core/store.ts';
import type { Bm25Index } from './bm25-index.ts';
import { enc } from './ids.ts';
import { decodeIndex, encodeIndex, SNAPSHOT_FORMAT, yieldToLoop } from './index-snapshot.ts';

/** Bytes per stored chunk: a value well under what SQLite rows and Redis strings take comfortably, written one at a time. */
const CHUNK_BYTES = 1 << 20;

/**
 * Snapshots are stored deflated (raw deflate, level 1): a restart then reads, JSON-parses and
 * base64-decodes a fraction of the bytes (at 100,000 bench records 6.6 MiB of index became well under
 * 1 MiB; natural text compresses less, varint postings still do). zlib's async calls run on libuv's
 * thread pool, so neither the compression after a build nor the inflation on a cold start holds the event loop.
 */
const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);
const COMPRESSION = 'deflate-raw';

/** What a namespace's snapshot is: written after its chunks, so a manifest never names chunks that are not there yet. */
export interface SnapshotManifest {
  format: string;
  /** The namespace counter value (as a string) the snapshot reflects; a random id on snapshots from before the counter, which then never match. */
  version: string;
  /** Names this snapshot's chunks, so a newer one never overwrites chunks a reader is fetching. */
  id: string;
  chunks: number;
  /** Stored bytes (after compression), what the chunks hold together. */
  bytes: number;
  records: number;
  /** 'deflate-raw' since snapshots are compressed; absent on older ones (stored as encoded). */
  compression?: typeof COMPRESSION;
  /** The encoded index's length before compression. */
  raw_bytes?: number;
}

/**
 * Index snapshots on the core store: per namespace a manifest under
 * `<prefix>:index-snapshot` and base64 chunks under `<prefix>:index-chunk:<ns>`.
 * A snapshot is used only when its version equals the namespace's write counter,
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
    if (m.compression !== undefined && m.compression !== COMPRESSION) return undefined; // a newer writer's: rebuild
    const parts = await this.chunks(ns).getMany(Array.from({ length: m.chunks }, (_, i) => chunkKey(m.id, i)));
    if (parts.some((p) => typeof p !== 'string')) return undefined; // replaced while we read: rebuild instead
    const stored = Buffer.concat(parts.map((p) => Buffer.from(p as string, 'base64')));
    if (stored.length !== m.bytes) return undefined;
    const bytes = m.compression === COMPRESSION ? await inflate(stored) : stored;
    if (m.raw_bytes !== undefined && bytes.length !== m.raw_bytes) return undefined;
    return { index: await decodeIndex(bytes, normalise), manifest: m };
  }

  /**
   * Writes `index` as the snapshot of `version`; false when the index changed while
   * it was being encoded (nothing is written then). Chunks first, manifest last, then
   * the previous snapshot's chunks are deleted.
   */
  async save(ns: string, version: string, index: Bm25Index): Promise<boolean> {
    const raw = await encodeIndex(index);
    if (!raw) return false;
    const bytes = await deflate(raw, { level: 1 });
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
      compression: COMPRESSION,
      raw_bytes: raw.length,
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
