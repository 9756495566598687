import type { MemoryRecord, SearchHit } from '../../core/primitives/memory.ts';

const words = (s: string): string[] => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

const matches = (r: MemoryRecord, filters?: Record<string, unknown>) =>
  !filters || Object.entries(filters).every(([k, v]) => JSON.stringify(r.metadata?.[k]) === JSON.stringify(v));

/**
 * A small TF-IDF ranking over key and content: enough for an example. Real
 * providers should use a search library (the built-in `keyv` provider uses
 * MiniSearch's BM25).
 */
export function rank(
  records: MemoryRecord[],
  query: string,
  topK: number,
  filters?: Record<string, unknown>,
): SearchHit[] {
  const terms = [...new Set(words(query))];
  if (terms.length === 0) return [];
  const docs = records.filter((r) => matches(r, filters)).map((r) => ({ r, w: words(`${r.key} ${r.content}`) }));
  const df = new Map(terms.map((t) => [t, docs.filter((d) => d.w.includes(t)).length]));
  const hits: SearchHit[] = [];
  for (const { r, w } of docs) {
    let score = 0;
    for (const t of terms) {
      const tf = w.filter((x) => x === t).length;
      if (tf) score += (tf / w.length) * Math.log(1 + docs.length / (df.get(t) ?? 1));
    }
    if (score > 0) hits.push({ record: r, score });
  }
  return hits.sort((a, b) => b.score - a.score).slice(0, topK);
}
