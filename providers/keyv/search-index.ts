import MiniSearch from 'minisearch';
import type { MemoryRecord, SearchHit } from '../../core/primitives/memory.ts';

/**
 * One namespace's records in memory with a BM25 index (MiniSearch) over key and
 * content. Built from the store on first use and kept current by the writes
 * of this process; `version` says which store generation it reflects.
 */
export class NamespaceIndex {
  readonly records = new Map<string, MemoryRecord>();
  private readonly mini = new MiniSearch<{ id: string; key: string; content: string }>({
    fields: ['key', 'content'],
    idField: 'id',
    searchOptions: { boost: { key: 2 }, prefix: (term) => term.length > 3, fuzzy: (term) => (term.length > 5 ? 0.2 : false) },
  });

  constructor(public version: string) {}

  put(r: MemoryRecord): void {
    if (this.records.has(r.key)) this.mini.discard(r.key);
    this.records.set(r.key, r);
    this.mini.add({ id: r.key, key: r.key, content: r.content });
  }

  remove(key: string): void {
    if (!this.records.delete(key)) return;
    this.mini.discard(key);
  }

  /** Lexical hits, best first, with metadata filters applied before the cut to top_k. */
  search(query: string, topK: number, filters?: Record<string, unknown>): SearchHit[] {
    const matches = (r: MemoryRecord) => !filters || Object.entries(filters).every(([k, v]) => JSON.stringify(r.metadata?.[k]) === JSON.stringify(v));
    const out: SearchHit[] = [];
    for (const hit of this.mini.search(query)) {
      const record = this.records.get(hit.id as string);
      if (!record || !matches(record)) continue;
      out.push({ record, score: hit.score });
      if (out.length >= topK) break;
    }
    return out;
  }

  /** Every record with a key, best-first by cosine similarity to `query` (semantic ranking). */
  rankByVector(query: number[], vectors: Map<string, number[]>, topK: number, filters?: Record<string, unknown>): SearchHit[] {
    const norm = Math.hypot(...query) || 1;
    const scored: SearchHit[] = [];
    for (const [key, vec] of vectors) {
      const record = this.records.get(key);
      if (!record) continue;
      if (filters && !Object.entries(filters).every(([k, v]) => JSON.stringify(record.metadata?.[k]) === JSON.stringify(v))) continue;
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
