import type { MemoryRecord } from '../../core/primitives/memory.ts';
import { Bm25Index, type ScoredDoc } from './bm25-index.ts';

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

/** Whether a record's metadata matches every filter (top-level keys, exact JSON equality). */
export function matchesFilters(
  metadata: Record<string, unknown> | undefined,
  filters?: Record<string, unknown>,
): boolean {
  return !filters || Object.entries(filters).every(([k, v]) => JSON.stringify(metadata?.[k]) === JSON.stringify(v));
}

/**
 * One namespace's search index (bm25-index.ts: top-k by MaxScore, see there why
 * it replaced MiniSearch) over key and content. It holds no record content: hits
 * are keys and scores, and the caller reads the records from the store to answer
 * (issue 26: no second copy of the content held only for the index). Built from
 * the store (or loaded from a snapshot) on first use and kept current by the
 * writes of this process; `version` says which store generation it reflects.
 */
export class NamespaceIndex {
  // Terms are stemmed and stop words dropped at index time, so "programs" finds
  // "programming" without query-time fuzzy expansion: that multiplies the
  // postings a query walks. Prefix matching is kept for one-word queries, where it is cheap.
  lexical: Bm25Index;

  constructor(
    public version: string,
    lexical?: Bm25Index,
  ) {
    this.lexical = lexical ?? new Bm25Index(normaliseTerm);
  }

  /** Keys newest first, for list pages; dropped by any change and rebuilt on the next list. */
  private newestFirst?: string[];

  get size(): number {
    return this.lexical.size;
  }

  keysByRecency(): string[] {
    this.newestFirst ??= this.lexical.keysByRecency();
    return this.newestFirst;
  }

  /** `previous` is the content the store held for this key before the write (its terms are released). */
  put(r: MemoryRecord, previous?: string): void {
    this.newestFirst = undefined;
    const updated = Date.parse(r.updated_at);
    this.lexical.add(
      r.key,
      r.content,
      { updated: Number.isNaN(updated) ? 0 : updated, metadata: r.metadata },
      previous,
    );
  }

  remove(key: string, content: string): void {
    if (!this.lexical.has(key)) return;
    this.newestFirst = undefined;
    this.lexical.remove(key, content);
  }

  /** Lexical hits (keys), best first, with metadata filters applied before the cut to top_k. */
  search(query: string, topK: number, filters?: Record<string, unknown>): ScoredDoc[] {
    const accept = (key: string) => this.lexical.has(key) && matchesFilters(this.lexical.metadataOf(key), filters);
    return this.lexical.search(query, topK, filters ? accept : undefined);
  }

  /** Every indexed record with a vector, best-first by cosine similarity to `query` (semantic ranking). */
  rankByVector(
    query: number[],
    vectors: Map<string, number[]>,
    topK: number,
    filters?: Record<string, unknown>,
  ): ScoredDoc[] {
    const norm = Math.hypot(...query) || 1;
    const scored: ScoredDoc[] = [];
    for (const [key, vec] of vectors) {
      if (!this.lexical.has(key)) continue;
      if (filters && !matchesFilters(this.lexical.metadataOf(key), filters)) continue;
      let dot = 0;
      for (let i = 0; i < Math.min(vec.length, query.length); i++) dot += vec[i] * query[i];
      scored.push({ key, score: dot / (norm * (Math.hypot(...vec) || 1)) });
    }
    return scored.sort((a, b) => b.score - a.score).slice(0, topK);
  }
}

/** Reciprocal rank fusion of two rankings (k = 60), so lexical and semantic scores need no common scale. */
export function fuse(a: ScoredDoc[], b: ScoredDoc[], topK: number): ScoredDoc[] {
  const score = new Map<string, number>();
  for (const list of [a, b]) {
    list.forEach((hit, rank) => {
      score.set(hit.key, (score.get(hit.key) ?? 0) + 1 / (60 + rank + 1));
    });
  }
  return [...score]
    .sort((x, y) => y[1] - x[1])
    .slice(0, topK)
    .map(([key, s]) => ({ key, score: s }));
}
