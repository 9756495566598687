/**
 * In-process profile of a one-word (prefix) query at BENCH_MEMORY_RECORDS records (100,000 by default),
 * with the bench's corpus and keys: the prefix expansion by the term groups against the scan of every
 * term it replaced, warm and on the first query after a snapshot load. Run: npx tsx bench/memory-prefix-profile.ts
 * (quote the load average: the machine is shared).
 */
import { loadavg } from 'node:os';
import { Bm25Index } from '../providers/keyv/bm25-index.ts';
import { decodeIndex, encodeIndex } from '../providers/keyv/index-snapshot.ts';
import { normaliseTerm } from '../providers/keyv/search-index.ts';
import { corpus } from './memory-corpus.ts';

const N = Number(process.env.BENCH_MEMORY_RECORDS ?? 100_000);
const { content } = corpus();
const idx = new Bm25Index(normaliseTerm);
for (let i = 0; i < N; i++) idx.add(`r${i}`, content(i), { updated: i, metadata: { shard: i % 10 } });
idx.trim();

const cpu = () => process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000;
function p50(f: () => unknown, n = 30): number {
  const ts: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    f();
    ts.push(performance.now() - t);
  }
  return ts.sort((a, b) => a - b)[n >> 1];
}

const bytes = (await encodeIndex(idx)) as Buffer;
// Cold: a decoded index's first one-word query builds its term groups.
const c0 = cpu();
const t0 = performance.now();
const back = await decodeIndex(bytes, normaliseTerm);
const decodeMs = performance.now() - t0;
const c1 = cpu();
const t1 = performance.now();
back.search('agent', 10);
const firstMs = performance.now() - t1;
const c2 = cpu();
console.log(
  `records ${N}, load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
console.log(
  `decode ${decodeMs.toFixed(1)} ms wall / ${(c1 - c0).toFixed(1)} ms CPU; first 'agent' search ${firstMs.toFixed(1)} ms wall / ${(c2 - c1).toFixed(1)} ms CPU`,
);
for (const q of ['agent', 'kalo', 'tenra', 'r1234']) {
  const scan = p50(() => idx.prefixMatches(normaliseTerm(q) as string, true));
  const groups = p50(() => idx.prefixMatches(normaliseTerm(q) as string));
  const search = p50(() => idx.search(q, 10));
  console.log(
    `'${q}': expansion by scan p50 ${scan.toFixed(3)} ms, by groups ${groups.toFixed(3)} ms (${idx.prefixMatches(normaliseTerm(q) as string).length} matches); search p50 ${search.toFixed(3)} ms`,
  );
}

// The first one-word query's share: building the term groups of a freshly decoded index.
const again = await decodeIndex(bytes, normaliseTerm);
const g0 = cpu();
again.prefixMatches('zzzz');
console.log(`term groups built on a decoded index: ${(cpu() - g0).toFixed(1)} ms CPU`);
const s0 = cpu();
again.search('agent', 10);
console.log(`then the first 'agent' search: ${(cpu() - s0).toFixed(1)} ms CPU`);
