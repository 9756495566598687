import type { DiscoveryEngine } from './engine.ts';
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
  engine.rowsOf = (ws) => {
    const out = new Set<number>();
    for (const w of ws) {
      const r = rows.get(w);
      if (r !== undefined && !STOPWORDS.has(w)) out.add(r);
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
