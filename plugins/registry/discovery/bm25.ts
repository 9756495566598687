import { FIELDS, type Field } from './documents.ts';
import { termOf, words } from './tokens.ts';

/**
 * Field-weighted BM25 (BM25F with one length normalisation over the weighted
 * length): a term's frequency is the weighted sum of its counts per field, so
 * `weather` in a name counts three times `weather` in a description.
 *
 * Slots are numbers handed out by the engine, never reused; a removed slot's postings stay
 * until compact() (skipped through `alive`), so a write costs the doc's own
 * terms, never a pass over the index.
 */
export const FIELD_WEIGHTS: Record<Field, number> = {
  name: 3,
  tool_names: 1.5,
  tags: 1.5,
  description: 1,
  tool_descriptions: 0.5,
  body: 0.3,
  metadata: 0.5,
};

const K1 = 1.2;
const B = 0.5;

interface Postings {
  slots: number[];
  tf: number[];
  /** Live docs holding the term. */
  df: number;
}

export interface QueryTerm {
  term: string;
  /** 1 for a word as typed; less for a typo correction or a neighbour by meaning. */
  weight: number;
  /** What the term adds to the normaliser (x idf): alternatives to one typed word share that word's part. */
  normWeight: number;
}

export class FieldBm25 {
  private readonly postings = new Map<string, Postings>();
  private readonly docTerms: (string[] | undefined)[] = [];
  private readonly lengths: number[] = [];
  readonly alive: boolean[] = [];
  private live = 0;
  private totalLength = 0;
  private dead = 0;

  get size(): number {
    return this.live;
  }

  add(slot: number, fields: Partial<Record<Field, string>>): void {
    const split: Partial<Record<Field, string[]>> = {};
    for (const f of FIELDS) if (fields[f]) split[f] = words(fields[f]!);
    this.addWords(slot, split);
  }

  /** add() for fields already split into words (the engine splits each field once for every index it feeds). */
  addWords(slot: number, fields: Partial<Record<Field, readonly string[]>>): void {
    const tf = new Map<string, number>();
    let length = 0;
    for (const f of FIELDS) {
      const ws = fields[f];
      if (!ws) continue;
      const w = FIELD_WEIGHTS[f];
      for (const word of ws) {
        const t = termOf(word);
        if (t === '') continue;
        tf.set(t, (tf.get(t) ?? 0) + w);
        length += w;
      }
    }
    for (const [t, n] of tf) {
      let p = this.postings.get(t);
      if (!p) this.postings.set(t, (p = { slots: [], tf: [], df: 0 }));
      p.slots.push(slot);
      p.tf.push(n);
      p.df++;
    }
    this.docTerms[slot] = [...tf.keys()];
    this.lengths[slot] = length;
    this.alive[slot] = true;
    this.live++;
    this.totalLength += length;
  }

  remove(slot: number): void {
    if (!this.alive[slot]) return;
    for (const t of this.docTerms[slot] ?? []) {
      const p = this.postings.get(t);
      if (p) p.df--;
    }
    this.alive[slot] = false;
    this.docTerms[slot] = undefined;
    this.live--;
    this.dead++;
    this.totalLength -= this.lengths[slot] ?? 0;
    if (this.dead > 1000 && this.dead > this.live) this.compact();
  }

  /** Drops postings of removed slots (and terms no live doc holds). */
  compact(): void {
    for (const [t, p] of this.postings) {
      if (p.df === 0) {
        this.postings.delete(t);
        continue;
      }
      const slots: number[] = [];
      const tf: number[] = [];
      for (let i = 0; i < p.slots.length; i++) {
        const s = p.slots[i]!;
        if (this.alive[s]) {
          slots.push(s);
          tf.push(p.tf[i]!);
        }
      }
      p.slots = slots;
      p.tf = tf;
    }
    this.dead = 0;
  }

  has(term: string): boolean {
    return (this.postings.get(term)?.df ?? 0) > 0;
  }

  idf(term: string): number {
    const df = this.postings.get(term)?.df ?? 0;
    return Math.log(1 + (this.live - df + 0.5) / (df + 0.5));
  }

  /**
   * Adds to acc[slot] each doc's BM25 share of the query, each term's part
   * divided by its upper bound (k1 + 1): the sum over terms, divided by the sum
   * of the query's idf, is a score in [0, 1] that means the same thing for any
   * query ("how much of what was asked this doc holds").
   * Returns the normaliser (sum of weight x idf over the query terms).
   */
  score(query: QueryTerm[], acc: Float64Array, touched: number[]): number {
    const avg = this.live ? this.totalLength / this.live : 1;
    let norm = 0;
    for (const q of query) {
      const p = this.postings.get(q.term);
      const idf = this.idf(q.term);
      norm += q.normWeight * idf;
      if (!p || p.df === 0) continue;
      const w = (q.weight * idf) / (K1 + 1);
      for (let i = 0; i < p.slots.length; i++) {
        const s = p.slots[i]!;
        if (!this.alive[s]) continue;
        const tf = p.tf[i]!;
        const lenNorm = 1 - B + (B * this.lengths[s]!) / avg;
        if (acc[s] === 0) touched.push(s);
        acc[s] += (w * tf * (K1 + 1)) / (tf + K1 * lenNorm);
      }
    }
    return norm;
  }
}
