/**
 * An inverted index with BM25 scoring and top-k retrieval by MaxScore (Turtle and
 * Flood): a bounded min-heap holds the best k so far, and query terms whose
 * upper bounds together cannot lift a record past the k-th score stop producing
 * candidates; they are only probed for records that the other terms already
 * made competitive.
 *
 * Why not MiniSearch any more: its search() scores and sorts every match and
 * exposes no postings or per-term statistics, so a heap with pruning cannot be
 * put inside it; keeping it only for tokenising would have meant holding two
 * indexes. Tokenising and stemming were ours already (normaliseTerm), so the
 * whole index is replaced and the scoring is defined here, once, for both the
 * pruned path and the exhaustive reference the property test compares it with.
 */

const K1 = 1.2;
const B = 0.75;
/** Weight of a term in the key relative to the content (the key names the record). */
const KEY_BOOST = 2;
/** Weight of a prefix expansion of a one-word query relative to the exact term. */
const PREFIX_WEIGHT = 0.375;
/** Upper bounds are inflated by this factor so float rounding never prunes a record that ties. */
const UB_SLACK = 1 + 1e-9;

export interface ScoredDoc {
  key: string;
  score: number;
}

interface Postings {
  docs: number[]; // ascending internal doc ids
  tfs: number[]; // weighted term frequency for the doc at the same position
  df: number; // live documents holding the term
  dead: number; // entries whose doc was removed, compacted away lazily
  maxTf: number; // never lowered on removal: stays a valid upper bound
  minLen: number; // never raised on removal: stays a valid upper bound
}

interface QueryTerm {
  p: Postings;
  weight: number;
  idf: number;
  ub: number;
  order: number;
  cursor: number;
}

export function tokenise(text: string, normalise: (t: string) => string | null): string[] {
  const out: string[] = [];
  for (const raw of text.split(/[\n\r\p{Z}\p{P}]+/u)) {
    if (!raw) continue;
    const t = normalise(raw);
    if (t) out.push(t);
  }
  return out;
}

export class Bm25Index {
  private readonly terms = new Map<string, Postings>();
  private readonly ids = new Map<string, number>();
  private readonly keyOf: (string | undefined)[] = [];
  private readonly lenOf: number[] = [];
  private live = 0;
  private totalLen = 0;

  constructor(private readonly normalise: (t: string) => string | null) {}

  get size(): number {
    return this.live;
  }

  private weighted(key: string, content: string): Map<string, number> {
    const tf = new Map<string, number>();
    for (const t of tokenise(content, this.normalise)) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tokenise(key, this.normalise)) tf.set(t, (tf.get(t) ?? 0) + KEY_BOOST);
    return tf;
  }

  add(key: string, content: string): void {
    this.remove(key, content);
    const tf = this.weighted(key, content);
    let len = 0;
    for (const v of tf.values()) len += v;
    const id = this.keyOf.length;
    this.keyOf.push(key);
    this.lenOf.push(len);
    this.ids.set(key, id);
    this.live++;
    this.totalLen += len;
    for (const [t, f] of tf) {
      let p = this.terms.get(t);
      if (!p) this.terms.set(t, (p = { docs: [], tfs: [], df: 0, dead: 0, maxTf: 0, minLen: Infinity }));
      p.docs.push(id);
      p.tfs.push(f);
      p.df++;
      if (f > p.maxTf) p.maxTf = f;
      if (len < p.minLen) p.minLen = len;
    }
  }

  /** `content` is the record's current content: its terms say which postings hold the doc, so no term list is kept per doc. */
  remove(key: string, content: string): void {
    const id = this.ids.get(key);
    if (id === undefined) return;
    this.ids.delete(key);
    this.keyOf[id] = undefined;
    this.live--;
    this.totalLen -= this.lenOf[id];
    for (const t of this.weighted(key, content).keys()) {
      const p = this.terms.get(t);
      if (!p) continue;
      p.df--;
      p.dead++;
      if (p.df === 0) this.terms.delete(t);
      else if (p.dead * 2 > p.docs.length) this.compact(p);
    }
  }

  private compact(p: Postings): void {
    let w = 0;
    for (let r = 0; r < p.docs.length; r++) {
      if (this.keyOf[p.docs[r]] === undefined) continue;
      p.docs[w] = p.docs[r];
      p.tfs[w++] = p.tfs[r];
    }
    p.docs.length = w;
    p.tfs.length = w;
    p.dead = 0;
  }

  /** The query's terms with weights: duplicates add up; a one-word query of more than 3 letters also matches words it starts. */
  private queryTerms(query: string): Map<string, number> {
    const toks = tokenise(query, this.normalise);
    const w = new Map<string, number>();
    for (const t of toks) w.set(t, (w.get(t) ?? 0) + 1);
    if (toks.length === 1 && toks[0].length > 3) {
      for (const t of this.terms.keys()) if (t !== toks[0] && t.startsWith(toks[0])) w.set(t, PREFIX_WEIGHT);
    }
    return w;
  }

  private prepare(query: string): { qts: QueryTerm[]; avg: number } {
    const avg = this.live ? this.totalLen / this.live : 1;
    const qts: QueryTerm[] = [];
    let order = 0;
    for (const [t, weight] of this.queryTerms(query)) {
      const p = this.terms.get(t);
      if (!p) continue;
      const idf = Math.log(1 + (this.live - p.df + 0.5) / (p.df + 0.5));
      const ub = weight * idf * sat(p.maxTf, p.minLen, avg) * UB_SLACK;
      qts.push({ p, weight, idf, ub, order: order++, cursor: 0 });
    }
    return { qts, avg };
  }

  /** Every match scored and sorted: the definition the pruned search must agree with (tests and fallbacks only). */
  exhaustive(query: string, topK: number, accept: (key: string) => boolean = () => true): ScoredDoc[] {
    const { qts, avg } = this.prepare(query);
    const parts = new Map<number, number[]>();
    for (const q of qts) {
      for (let i = 0; i < q.p.docs.length; i++) {
        const d = q.p.docs[i];
        if (this.keyOf[d] === undefined) continue;
        let arr = parts.get(d);
        if (!arr) parts.set(d, (arr = new Array<number>(qts.length).fill(0)));
        arr[q.order] = q.weight * q.idf * sat(q.p.tfs[i], this.lenOf[d], avg);
      }
    }
    const out: ScoredDoc[] = [];
    for (const [d, arr] of parts) {
      const key = this.keyOf[d] as string;
      if (accept(key)) out.push({ key, score: sum(arr) });
    }
    return out.sort(better).slice(0, topK);
  }

  /** The best `topK` records that `accept` lets through, best first, by MaxScore over the query's postings. */
  search(query: string, topK: number, accept: (key: string) => boolean = () => true): ScoredDoc[] {
    if (topK <= 0) return [];
    const { qts, avg } = this.prepare(query);
    if (!qts.length) return [];
    // Ascending upper bound: the non-essential terms are a prefix of this order.
    const byUb = [...qts].sort((a, b) => a.ub - b.ub);
    const prefixUb: number[] = [];
    let acc = 0;
    for (const q of byUb) prefixUb.push((acc += q.ub));
    const heap = new TopK(topK);
    let firstEssential = 0;
    const parts = new Array<number>(qts.length);
    const advanceTo = (q: QueryTerm, d: number) => {
      const docs = q.p.docs;
      if (q.cursor < docs.length && docs[q.cursor] >= d) return;
      // Galloping then binary search: cheap for the short hops essential lists make.
      let lo = q.cursor;
      let step = 1;
      let hi = lo + step;
      while (hi < docs.length && docs[hi] < d) {
        lo = hi;
        step *= 2;
        hi = lo + step;
      }
      if (hi > docs.length) hi = docs.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (docs[mid] < d) lo = mid + 1;
        else hi = mid;
      }
      q.cursor = lo;
    };
    for (;;) {
      // Next candidate: the smallest doc any essential term is on.
      let d = Infinity;
      for (let i = firstEssential; i < byUb.length; i++) {
        const q = byUb[i];
        if (q.cursor < q.p.docs.length && q.p.docs[q.cursor] < d) d = q.p.docs[q.cursor];
      }
      if (d === Infinity) break;
      parts.fill(0);
      let partial = 0;
      for (let i = firstEssential; i < byUb.length; i++) {
        const q = byUb[i];
        if (q.cursor < q.p.docs.length && q.p.docs[q.cursor] === d) {
          const c = q.weight * q.idf * sat(q.p.tfs[q.cursor], this.lenOf[d], avg);
          parts[q.order] = c;
          partial += c;
          q.cursor++;
        }
      }
      const key = this.keyOf[d];
      if (key === undefined) continue;
      // Non-essential terms, largest bound first, each probed only while the record can still make the heap.
      let viable = true;
      for (let i = firstEssential - 1; i >= 0; i--) {
        if (heap.full && partial + prefixUb[i] < heap.minScore) {
          viable = false;
          break;
        }
        const q = byUb[i];
        advanceTo(q, d);
        if (q.cursor < q.p.docs.length && q.p.docs[q.cursor] === d) {
          const c = q.weight * q.idf * sat(q.p.tfs[q.cursor], this.lenOf[d], avg);
          parts[q.order] = c;
          partial += c;
        }
      }
      if (!viable || (heap.full && partial * UB_SLACK < heap.minScore)) continue;
      // The score is summed in query-term order, as the exhaustive path does, so both give identical floats.
      const score = sum(parts);
      if (!heap.admits(score, key) || !accept(key)) continue;
      heap.push({ key, score });
      if (heap.full) {
        while (firstEssential < byUb.length && prefixUb[firstEssential] < heap.minScore) firstEssential++;
      }
    }
    return heap.sorted();
  }
}

/** BM25's term-frequency saturation with length normalisation; rises with tf, falls with length. */
function sat(tf: number, len: number, avg: number): number {
  return (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / avg));
}

function sum(parts: number[]): number {
  let s = 0;
  for (const p of parts) s += p;
  return s;
}

/** Ranking order: higher score first, then key, so ties rank the same on every path. */
export function better(a: ScoredDoc, b: ScoredDoc): number {
  return b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** A bounded min-heap on ranking order: its root is the worst of the best k so far. */
class TopK {
  private readonly h: ScoredDoc[] = [];
  constructor(private readonly k: number) {}

  get full(): boolean {
    return this.h.length >= this.k;
  }

  get minScore(): number {
    return this.h.length ? this.h[0].score : -Infinity;
  }

  admits(score: number, key: string): boolean {
    return !this.full || better({ key, score }, this.h[0]) < 0;
  }

  push(x: ScoredDoc): void {
    const h = this.h;
    if (this.full) {
      h[0] = x;
      this.down(0);
      return;
    }
    h.push(x);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (better(h[i], h[p]) <= 0) break; // parent is worse: heap order holds
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.h;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < h.length && better(h[l], h[w]) > 0) w = l;
      if (r < h.length && better(h[r], h[w]) > 0) w = r;
      if (w === i) return;
      [h[i], h[w]] = [h[w], h[i]];
      i = w;
    }
  }

  sorted(): ScoredDoc[] {
    return [...this.h].sort(better);
  }
}
