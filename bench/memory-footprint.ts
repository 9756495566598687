import { decodeIndex, encodeIndex } from '../providers/keyv/index-snapshot.ts';
import { NamespaceIndex, normaliseTerm } from '../providers/keyv/search-index.ts';
import type { MemoryRecord } from '../core/primitives/memory.ts';
import { corpus } from './memory-corpus.ts';

/**
 * Run as `node --expose-gc --import tsx bench/memory-footprint.ts <records>` by
 * bench/memory.bench.ts: prints one JSON line. Index memory is the growth of
 * heapUsed + arrayBuffers (typed-array postings live outside the JS heap) after a
 * full GC, from "the records are in memory" to "the records and their index are":
 * what the index costs on top of the data it indexes. Raw content size is the UTF-8
 * bytes of every record's content.
 */
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const n = Number(process.argv[2] ?? 100_000);
const used = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

const { content } = corpus();

const now = Date.now();
const records: MemoryRecord[] = [];
let raw = 0;
for (let i = 0; i < n; i++) {
  // A flat copy, as a record read from a store is: the corpus builds contents by concatenation, and V8
  // flattening those ropes during indexing would show up as memory the index freed.
  const c: string = JSON.parse(JSON.stringify(content(i)));
  raw += Buffer.byteLength(c);
  const at = new Date(now + i).toISOString();
  records.push({
    namespace: 'big',
    key: `r${i}`,
    content: c,
    metadata: { shard: i % 10 },
    created_at: at,
    updated_at: at,
  });
}
// Held to the end: V8 frees what no live code refers to, and the records must stay in memory for the difference to be the index alone.
(globalThis as { keep?: unknown }).keep = records;
const before = used();
const t0 = performance.now();
let index: NamespaceIndex | undefined = new NamespaceIndex('v');
for (const r of records) index.put(r);
index.lexical.trim();
const buildMs = performance.now() - t0;
const after = used();

// Search cost without HTTP: CPU per query on the built index (what the index itself spends).
const { query, broad } = corpus();
const cpuPerQuery = (q: (i: number) => string) => {
  for (let i = 0; i < 50; i++) index?.search(q(i), 10); // warm-up: optimised code, as a server that has been up
  const c = process.cpuUsage();
  for (let i = 0; i < 200; i++) index?.search(q(i), 10);
  const u = process.cpuUsage(c);
  return (u.user + u.system) / 1000 / 200;
};
const selectiveCpuMs = cpuPerQuery(query);
const broadCpuMs = cpuPerQuery(broad);

const t1 = performance.now();
const bytes = (await encodeIndex(index.lexical)) as Buffer;
const encodeMs = performance.now() - t1;
const base64 = bytes.toString('base64');
index = undefined;
const freed = used();
const t2 = performance.now();
const c2 = process.cpuUsage();
const loaded = await decodeIndex(Buffer.from(base64, 'base64'), normaliseTerm);
const decodeMs = performance.now() - t2;
const decodeCpuMs = process.cpuUsage(c2).user / 1000;
const afterLoad = used();

console.log(
  JSON.stringify({
    records: n,
    rawBytes: raw,
    indexBytes: after - before,
    loadedIndexBytes: afterLoad - freed,
    buildMs,
    snapshotBytes: bytes.length,
    encodeMs,
    decodeMs,
    decodeCpuMs,
    selectiveCpuMs,
    broadCpuMs,
    loadedSize: loaded.size,
  }),
);
