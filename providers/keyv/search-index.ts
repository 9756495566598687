import type { MemoryRecord, SearchHit } from '../../core/primitives/memory.ts';
import { Bm25Index } from './bm25-index.ts';

const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have i if in into is it its of on or our so that the their then there these they this to was we were will with you your'.split(
    ' ',
  ),
);

/**
 * Lower-case, drop stop words, strip common English suffixes (a light stemmer:
 * plural and -ing/-ed forms meet their stem, "running" and "runs" meet "run").
 * Applied to documents and queries alike.
 */
export function normaliseTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (STOP_WORDS.has(t)) return null;
  if (t.length <= 3 || !/^[a-z]+$/.test(t)) return t;
  let stem = t;
  if (stem.endsWith('ies')) stem = `${stem.slice(0, -3)}y`;
  else if (stem.endsWith('ing') && stem.length > 5) stem = stem.slice(0, -3);
  else if (stem.endsWith('ed') && stem.length > 4) stem = stem.slice(0, -2);
  else if (stem.endsWith('es') && /(ss|sh|ch|x|z)es$/.test(stem)) stem = stem.slice(0, -2);
  else if (stem.endsWith('s') && !stem.endsWith('ss') && !stem.endsWith('us') && !stem.endsWith('is'))
    stem = stem.slice(0, -1);
  // "programm" -> "program", "runn" -> "run"; keep ll/ss/zz ("fall", "class").
  if (stem !== t && /([^aeiouslz])\1$/.test(stem)) stem = stem.slice(0, -1);
  return stem;
}

/**
 * One namespace's records in memory with a BM25 index (bm25-index.ts: top-k by
 * MaxScore, see there why it replaced MiniSearch) over key and content. Built from the store on first use and kept current by the writes
 * of this process; `version` says which store generation it reflects.
 */
export class NamespaceIndex {
  readonly records = new Map<string, MemoryRecord>();
  // Terms are stemmed and stop words dropped at index time, so "programs" finds
  // "programming" without query-time fuzzy expansion: that multiplies the
  // postings a query walks. Prefix matching is kept for one-word queries, where it is cheap.
  readonly lexical = new Bm25Index(normaliseTerm);

  constructor(public version: string) {}

  /** Records newest first, for list pages; dropped by any change and rebuilt on the next list. */
  private newestFirst?: MemoryRecord[];

  byRecency(): MemoryRecord[] {
    this.newestFirst ??= [...this.records.values()].sort((a, b) =>
      a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : a.key.localeCompare(b.key),
    );
    return this.newestFirst;
  }

  put(r: MemoryRecord): void {
    this.newestFirst = undefined;
    const old = this.records.get(r.key);
    if (old) this.lexical.remove(old.key, old.content);
    this.records.set(r.key, r);
    this.lexical.add(r.key, r.content);
  }

  remove(key: string): void {
    const old = this.records.get(key);
    if (!old) return;
    this.records.delete(key);
    this.newestFirst = undefined;
    this.lexical.remove(key, old.content);
  }

  /** Lexical hits, best first, with metadata filters applied before the cut to top_k. */
  search(query: string, topK: number, filters?: Record<string, unknown>): SearchHit[] {
    const matches = (r: MemoryRecord) =>
      !filters || Object.entries(filters).every(([k, v]) => JSON.stringify(r.metadata?.[k]) === JSON.stringify(v));
    const accept = (key: string) => {
      const r = this.records.get(key);
      return r !== undefined && matches(r);
    };
    return this.lexical
      .search(query, topK, filters ? accept : undefined)
      .map((h) => ({ record: this.records.get(h.key) as MemoryRecord, score: h.score }));
  }

  /** Every record with a key, best-first by cosine similarity to `query` (semantic ranking). */
  rankByVector(
    query: number[],
    vectors: Map<string, number[]>,
    topK: number,
    filters?: Record<string, unknown>,
  ): SearchHit[] {
    const norm = Math.hypot(...query) || 1;
    const scored: SearchHit[] = [];
    for (const [key, vec] of vectors) {
      const record = this.records.get(key);
      if (!record) continue;
      if (
        filters &&
        !Object.entries(filters).every(([k, v]) => JSON.stringify(record.metadata?.[k]) === JSON.stringify(v))
      )
        continue;
      let dot = 0;
      for (let i = 0; i < Math.min(vec.length, query.length); i++) dot += vec[i] * query[i];
      scored.push({ record, score: dot / (norm * (Math.hypot(...vec) || 1)) });
    }
    return scored.sort((a, b) => b.score - a.score).slice(0, topK);
  }
}

/** Reciprocal rank fusion of two rankings (k = 60), so lexical and semantic scores need no common scale. */
export function fuse(a: SearchHit[], b: SearchHit[], topK: number): SearchHit[] {
  const score = new Map<string, { hit: SearchHit; s: number }>();
  for (const list of [a, b]) {
    list.forEach((hit, rank) => {
      const e = score.get(hit.record.key) ?? { hit, s: 0 };
      e.s += 1 / (60 + rank + 1);
      score.set(hit.record.key, e);
    });
  }
  return [...score.values()]
    .sort((x, y) => y.s - x.s)
    .slice(0, topK)
    .map((e) => ({ record: e.hit.record, score: e.s }));
}
