import type { DiscoveryEngine } from './engine.ts';
import { type PoolScan, poolScan } from './pool-scan.ts';
import { STOPWORDS } from './tokens.ts';
import type { WordVectors } from './word-vectors.ts';

/**
 * What the word vectors tell the lexical side of a query:
 * - whether a word is common English (then it is not a typo: `mow` is not `now`);
 * - how much a typed word says (SIF weight with a small a: `tomorrow` little, `guitar` much);
 * - for a word the index lacks, the index words nearest in meaning (`rain` -> `precipitation`).
 */
const COMMON_RANK = 30_000;
const SAY_A = 1e-4;
const ZIPF_H = Math.log(341_479) + 0.5772;
const NEIGHBOUR_MIN_COS = 0.55;
const NEIGHBOURS = 3;
const NEIGHBOUR_MIN_RANK = 1_000;
/**
 * Document-side expansion: each description or tag word brings its RELATED nearest words among the RELATED_POOL
 * most common ones (rows RELATED_SKIP.. of the frequency-ordered table; the very commonest are near everything).
 */
const RELATED = 3;
const RELATED_MIN_COS = 0.6;
const RELATED_SKIP = 300;
const RELATED_POOL = 10_000;

export function attachWordKnowledge(engine: DiscoveryEngine, wv: WordVectors): void {
  const { rows, data, dims } = wv;
  engine.embedderKnows = (w) => (rows.get(w) ?? Number.POSITIVE_INFINITY) < COMMON_RANK;
  engine.wordWeight = (w: string) => {
    const r = rows.get(w);
    if (r === undefined) return 1;
    const p = 1 / ((r + 1) * ZIPF_H);
    return SAY_A / (SAY_A + p);
  };
  const say = engine.wordWeight;
  // Rows are frequency ranks, so the pool is one contiguous block of the table. A word's related words are computed
  // once per process (one pass over the pool, ~2 M multiply-adds) and kept: a catalog repeats its words.
  const related = new Map<number, string[]>();
  let byRow: string[] | undefined;
  let eligible: Uint8Array | undefined;
  /** The eligible pool rows in row order, and a SIMD scanner over their vectors (pool-scan.ts), when available. */
  let poolRows: Int32Array | undefined;
  let scanner: PoolScan | undefined;
  const relatedOf = (r: number): string[] => {
    let got = related.get(r);
    if (got) return got;
    const end = Math.min(RELATED_POOL, rows.size);
    if (!byRow || !eligible || !poolRows) {
      byRow = [];
      for (const [w, row] of rows) if (row < RELATED_POOL) byRow[row] = w;
      eligible = new Uint8Array(RELATED_POOL);
      const kept: number[] = [];
      for (let o = RELATED_SKIP; o < RELATED_POOL; o++) {
        const w = byRow[o];
        eligible[o] = w !== undefined && /^[a-z]{3,}$/.test(w) && !STOPWORDS.has(w) ? 1 : 0;
        if (eligible[o] && o < end) kept.push(o);
      }
      poolRows = Int32Array.from(kept);
      const pool = new Float32Array(kept.length * dims);
      kept.forEach((o, i) => {
        pool.set(data.subarray(o * dims, (o + 1) * dims), i * dims);
      });
      scanner = poolScan(pool, kept.length, dims);
    }
    const best: { row: number; cos: number }[] = [];
    const q = data.subarray(r * dims, (r + 1) * dims);
    if (scanner) {
      const dots = scanner.dots(q);
      for (let i = 0; i < poolRows.length; i++) {
        const o = poolRows[i]!;
        if (o !== r && dots[i]! >= RELATED_MIN_COS) best.push({ row: o, cos: dots[i]! });
      }
    } else {
      const four = dims - (dims % 4);
      // Unrolled by four, as the engine's scan (and summed in the order pool-scan.ts keeps).
      for (let o = RELATED_SKIP; o < end; o++) {
        if (o === r || !eligible[o]) continue;
        const ob = o * dims;
        let a0 = 0;
        let a1 = 0;
        let a2 = 0;
        let a3 = 0;
        for (let k = 0; k < four; k += 4) {
          a0 += q[k]! * data[ob + k]!;
          a1 += q[k + 1]! * data[ob + k + 1]!;
          a2 += q[k + 2]! * data[ob + k + 2]!;
          a3 += q[k + 3]! * data[ob + k + 3]!;
        }
        for (let k = four; k < dims; k++) a0 += q[k]! * data[ob + k]!;
        const dot = a0 + a1 + a2 + a3;
        if (dot >= RELATED_MIN_COS) best.push({ row: o, cos: dot });
      }
    }
    best.sort((a, b) => b.cos - a.cos);
    got = best.slice(0, RELATED).map((b) => byRow![b.row]!);
    related.set(r, got);
    return got;
  };
  // Per word, not per row: a build asks for the same words tens of thousands of times.
  const NONE: string[] = [];
  const byWord = new Map<string, string[]>();
  engine.relatedWords = (ws) => {
    const out: string[] = [];
    let own: Set<string> | undefined;
    for (const w of ws) {
      let got = byWord.get(w);
      if (!got) {
        const r = rows.get(w);
        // The commonest words (`use`, `new`) are near everything: expanding them adds noise.
        got = r === undefined || r < RELATED_SKIP || STOPWORDS.has(w) ? NONE : relatedOf(r);
        byWord.set(w, got);
      }
      if (got === NONE) continue;
      own ??= new Set(ws);
      for (const n of got) if (!own.has(n) && !out.includes(n)) out.push(n);
    }
    return out;
  };
  // A word's row, or -1 for a stopword or a word without a vector: one lookup per word of every doc's gist.
  const rowOfWord = new Map<string, number>();
  engine.rowsOf = (ws) => {
    const out: number[] = [];
    // A long gist (an agent's skill descriptions) dedupes through a set; a short one through the array itself.
    const seen = ws.length > 64 ? new Set<number>() : undefined;
    for (const w of ws) {
      let r = rowOfWord.get(w);
      if (r === undefined) {
        r = STOPWORDS.has(w) ? -1 : (rows.get(w) ?? -1);
        if (rowOfWord.size < 200_000) rowOfWord.set(w, r);
      }
      if (r < 0 || (seen ? seen.has(r) : out.includes(r))) continue;
      seen?.add(r);
      out.push(r);
    }
    return Int32Array.from(out);
  };
  engine.align = (qs) => {
    const qRows: number[] = [];
    const qWeights: number[] = [];
    for (const q of new Set(qs)) {
      const r = rows.get(q);
      if (r === undefined) continue;
      qRows.push(r);
      qWeights.push(say(q));
    }
    const total = qWeights.reduce((a, b) => a + b, 0);
    return (docRows) => {
      if (!total || !docRows.length) return 0;
      let sum = 0;
      for (let i = 0; i < qRows.length; i++) {
        const r = qRows[i]!;
        const qBase = r * dims;
        let bestCos = 0;
        for (let j = 0; j < docRows.length; j++) {
          const d = docRows[j]!;
          if (d === r) {
            bestCos = 1;
            break;
          }
          const dBase = d * dims;
          let dot = 0;
          for (let k = 0; k < dims; k++) dot += data[qBase + k]! * data[dBase + k]!;
          if (dot > bestCos) bestCos = dot;
        }
        sum += qWeights[i]! * bestCos;
      }
      return sum / total;
    };
  };
  // The index words that have vectors, as one matrix; rebuilt when the index changed since the last lookup.
  let built = -1;
  let vocab: string[] = [];
  let matrix = new Float32Array(0);
  const build = () => {
    vocab = [];
    // Very common words (`what`, `all`, `many`) are near everything and mean nothing in particular.
    for (const w of engine.indexWords()) {
      const r = rows.get(w);
      if (w.length > 2 && r !== undefined && r >= NEIGHBOUR_MIN_RANK && !STOPWORDS.has(w)) vocab.push(w);
    }
    matrix = new Float32Array(vocab.length * dims);
    vocab.forEach((w, i) => {
      const r = rows.get(w)!;
      matrix.set(data.subarray(r * dims, (r + 1) * dims), i * dims);
    });
    built = engine.version;
  };
  engine.neighbours = (w) => {
    const r = rows.get(w);
    if (r === undefined) return [];
    if (built !== engine.version) build();
    const best: { word: string; weight: number }[] = [];
    for (let i = 0; i < vocab.length; i++) {
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += data[r * dims + d]! * matrix[i * dims + d]!;
      if (dot >= NEIGHBOUR_MIN_COS) best.push({ word: vocab[i]!, weight: dot });
    }
    best.sort((a, b) => b.weight - a.weight);
    // A neighbour is a hint, not the word itself: its hits count at most two thirds of a typed match.
    return best.slice(0, NEIGHBOURS).map((b) => ({ word: b.word, weight: 0.67 * b.weight }));
  };
}
