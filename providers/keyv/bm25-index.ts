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
 *
 * Memory layout (issue 26: the index must cost less than the content it indexes):
 * - records are integer doc ids; a doc table holds per id only the key, the
 *   weighted length, the update time and (shared, interned) metadata: never the content;
 * - a term in two or more records has typed-array postings (Int32Array doc ids,
 *   Uint8Array term frequencies widened to 16 or 32 bits only when a count needs it);
 * - a term in exactly one record (every key is one) is a single small integer in
 *   the term map, doc id and frequency packed together: no object at all.
 * Doc ids only grow (postings stay sorted by appending); replaced and removed
 * records leave dead ids that per-term compaction drops lazily, and the whole
 * table is renumbered when dead ids outnumber live ones.
 */

const K1 = 1.2;
const B = 0.75;
/** Weight of a term in the key relative to the content (the key names the record). */
const KEY_BOOST = 2;
/** Weight of a prefix expansion of a one-word query relative to the exact term. */
const PREFIX_WEIGHT = 0.375;
/** Upper bounds are inflated by this factor so float rounding never prunes a record that ties. */
const UB_SLACK = 1 + 1e-9;
/** A singleton term packs doc * SINGLE_TF + tf into one small integer (kept below 2^30, V8's smallest Smi range). */
const SINGLE_TF = 64;
const SINGLE_MAX_DOC = 2 ** 30 / SINGLE_TF - 1;
/** Metadata objects shared by equal value, up to this many distinct values (beyond it each record keeps its own). */
const INTERN_CAP = 4096;

export interface ScoredDoc {
  key: string;
  score: number;
}

type TfArray = Uint8Array | Uint16Array | Uint32Array;

/** The postings of a term held by two or more records. */
export class Postings {
  private d: Int32Array; // ascending internal doc ids; the first n are used
  private f: TfArray; // weighted term frequency for the doc at the same position
  /**
   * A loaded snapshot's bytes for this term, not decoded yet (index-snapshot.ts: n doc-id gaps, then n
   * counts, as varints): a cold start decodes only the terms its queries and writes touch.
   */
  private packed?: Uint8Array;
  n = 0;
  df = 0; // live documents holding the term
  dead = 0; // entries whose doc was removed, compacted away lazily
  maxTf = 0; // never lowered on removal: stays a valid upper bound (exact again after compaction)
  minLen = Number.POSITIVE_INFINITY; // never raised on removal: stays a valid upper bound

  constructor(capacity: number) {
    this.d = new Int32Array(capacity);
    this.f = new Uint8Array(capacity);
  }

  /** Postings of `n` entries still in their snapshot bytes (checked by the decoder: in range, well formed). */
  static packed(bytes: Uint8Array, n: number, maxTf: number, minLen: number): Postings {
    const p = new Postings(0);
    p.packed = bytes;
    p.n = n;
    p.df = n;
    p.maxTf = maxTf;
    p.minLen = minLen;
    return p;
  }

  get docs(): Int32Array {
    if (this.packed) this.unpack();
    return this.d;
  }

  set docs(a: Int32Array) {
    this.d = a;
  }

  get tfs(): TfArray {
    if (this.packed) this.unpack();
    return this.f;
  }

  set tfs(a: TfArray) {
    this.f = a;
  }

  private unpack(): void {
    const buf = this.packed as Uint8Array;
    this.packed = undefined;
    const n = this.n;
    const docs = new Int32Array(n);
    const tfs: TfArray =
      this.maxTf > 0xffff ? new Uint32Array(n) : this.maxTf > 0xff ? new Uint16Array(n) : new Uint8Array(n);
    // Doc ids are stored as gaps from the previous id, counts as they are.
    const pos = decodeVarints(buf, 0, docs, n, true);
    decodeVarints(buf, pos, tfs, n, false);
    this.d = docs;
    this.f = tfs;
  }

  push(d: number, f: number, len: number): void {
    if (this.n === this.docs.length) {
      const cap = Math.max(4, this.n * 2);
      const docs = new Int32Array(cap);
      docs.set(this.docs);
      this.docs = docs;
      this.tfs = widen(this.tfs, cap, f);
    } else if (f > maxOf(this.tfs)) this.tfs = widen(this.tfs, this.tfs.length, f);
    this.docs[this.n] = d;
    this.tfs[this.n++] = f;
    this.df++;
    if (f > this.maxTf) this.maxTf = f;
    if (len < this.minLen) this.minLen = len;
  }

  /** Drops unused capacity (after a bulk build, where doubling left up to half of it empty). */
  trim(): void {
    if (this.docs.length === this.n) return;
    this.docs = this.docs.slice(0, this.n);
    this.tfs = this.tfs.slice(0, this.n);
  }
}

function maxOf(a: TfArray): number {
  return a instanceof Uint8Array ? 0xff : a instanceof Uint16Array ? 0xffff : 0xffffffff;
}

/** A copy of `tfs` with room for `cap` entries, in the narrowest type that holds `f` and every count already there. */
function widen(tfs: TfArray, cap: number, f: number): TfArray {
  const bytes = Math.max(tfs.BYTES_PER_ELEMENT, f <= 0xff ? 1 : f <= 0xffff ? 2 : 4);
  const out: TfArray = bytes === 1 ? new Uint8Array(cap) : bytes === 2 ? new Uint16Array(cap) : new Uint32Array(cap);
  out.set(tfs.subarray(0, Math.min(tfs.length, cap)));
  return out;
}

/** A term's map entry: a packed singleton (one record) or postings. */
export type TermEntry = number | Postings;

export const packSingle = (doc: number, tf: number): number => doc * SINGLE_TF + tf;
export const canPackSingle = (doc: number, tf: number): boolean => tf < SINGLE_TF && doc <= SINGLE_MAX_DOC;
export const singleDoc = (e: number): number => Math.floor(e / SINGLE_TF);
export const singleTf = (e: number): number => e % SINGLE_TF;

interface QueryTerm {
  docs: Int32Array;
  tfs: TfArray;
  n: number;
  /** weight * idf * (K1 + 1): the term's factor in every contribution. */
  w: number;
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

/** Per-record facts kept beside the postings: what listing and filtering need, never the content. */
export interface DocInfo {
  /** Milliseconds since the epoch (newest-first listing). */
  updated?: number;
  metadata?: Record<string, unknown>;
}

/** Everything the index holds, for the snapshot codec (index-snapshot.ts). */
export interface IndexParts {
  keyOf: (string | undefined)[];
  lenOf: Int32Array;
  updatedOf: Float64Array;
  metaOf: (Record<string, unknown> | undefined)[];
  terms: Map<string, TermEntry>;
  totalLen: number;
}

export class Bm25Index {
  private terms = new Map<string, TermEntry>();
  private readonly ids = new Map<string, number>();
  private keyOf: (string | undefined)[] = [];
  private lenOf: Int32Array = new Int32Array(16);
  private updatedOf: Float64Array = new Float64Array(16);
  /**
   * Per doc, the key's first three UTF-16 units packed in one number (keyHead()): ties are ranked by key, and
   * a query whose terms are in every record ties them all (issue 26's broad query), so the search
   * compares a key with the heap's worst for every record. Reading each key string there meant a cache
   * miss per record wherever the strings lie scattered among the records they came from (4x the CPU of
   * the same search over keys allocated side by side); these numbers lie in one array, and only keys
   * that share their first three units with the heap's worst are read.
   */
  private headOf: Uint32Array = new Uint32Array(16);
  private metaOf: (Record<string, unknown> | undefined)[] = [];
  private readonly interned = new Map<string, Record<string, unknown>>();
  private live = 0;
  private totalLen = 0;
  /** Bumped by every change, so a snapshot being written in slices can tell it saw one consistent state. */
  mutations = 0;
  /**
   * The prefix dictionary (see prefixMatches()): terms of 4 or more units grouped by keyHead() of their first
   * three units, built on the first prefix query and kept current by add(). Deleted terms stay in their group
   * until the next rebuild (a query checks `terms`); `stale` counts them so churn cannot grow the groups unbounded.
   */
  private byHead?: Map<number, string[]>;
  private stale = 0;

  constructor(private readonly normalise: (t: string) => string | null) {}

  get size(): number {
    return this.live;
  }

  /** Doc ids in use, live or dead (what renumbering compacts). */
  get slots(): number {
    return this.keyOf.length;
  }

  has(key: string): boolean {
    return this.docOf(key) !== undefined;
  }

  /**
   * A record's doc id. Most keys are one token that is its own term, held by no
   * other record: that term's packed singleton already says which doc it is, so
   * such keys get no entry in `ids` (100,000 map entries saved at 100,000 records);
   * the entry is made when another record takes up the term.
   */
  private docOf(key: string): number | undefined {
    const id = this.ids.get(key);
    if (id !== undefined) return id;
    const e = this.terms.get(key);
    if (typeof e !== 'number') return undefined;
    const d = singleDoc(e);
    return this.keyOf[d] === key ? d : undefined;
  }

  /** Reused by every add and remove (each consumes it before the next call): a build makes less garbage to collect. */
  private readonly scratch = new Map<string, number>();

  private weighted(key: string, content: string): Map<string, number> {
    const tf = this.scratch;
    tf.clear();
    for (const t of tokenise(content, this.normalise)) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tokenise(key, this.normalise)) {
      // A key that is one token becomes the term as the key string itself: one string, not two.
      const term = t === key ? key : t;
      tf.set(term, (tf.get(term) ?? 0) + KEY_BOOST);
    }
    return tf;
  }

  private intern(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    if (!meta) return undefined;
    let empty = true;
    for (const _ in meta) {
      empty = false;
      break;
    }
    if (empty) return undefined;
    const json = JSON.stringify(meta);
    const hit = this.interned.get(json);
    if (hit) return hit;
    if (this.interned.size < INTERN_CAP) this.interned.set(json, meta);
    return meta;
  }

  /**
   * Indexes a record. `previous` is the content the index holds for this key, if any
   * (the caller has it from the store): its terms say which postings to release.
   */
  add(key: string, content: string, info: DocInfo = {}, previous?: string): void {
    if (this.docOf(key) !== undefined) this.remove(key, previous ?? content);
    if (this.keyOf.length > 1024 && this.keyOf.length > 2 * this.live + 1024) this.renumber();
    const tf = this.weighted(key, content);
    let len = 0;
    for (const v of tf.values()) len += v;
    const id = this.keyOf.length;
    if (id === this.lenOf.length) {
      // At least 16: a loaded empty index has arrays of length 0, and doubling 0 left no room.
      const cap = Math.max(16, id * 2);
      this.lenOf = grow(this.lenOf, cap) as Int32Array;
      this.updatedOf = grow(this.updatedOf, cap) as Float64Array;
      this.headOf = grow(this.headOf, cap) as Uint32Array;
    }
    this.keyOf.push(key);
    this.metaOf.push(this.intern(info.metadata));
    this.lenOf[id] = len;
    this.updatedOf[id] = info.updated ?? 0;
    this.headOf[id] = keyHead(key);
    this.live++;
    this.totalLen += len;
    this.mutations++;
    for (const [t, f] of tf) {
      const e = this.terms.get(t);
      if (e === undefined) {
        this.terms.set(t, canPackSingle(id, f) ? packSingle(id, f) : one(id, f, len));
        if (this.byHead && t.length > 3) this.file(this.byHead, t);
      } else if (typeof e === 'number') {
        const d = singleDoc(e);
        if (this.keyOf[d] === undefined) {
          // The one record was removed with content that did not name this term: replace it.
          this.terms.set(t, canPackSingle(id, f) ? packSingle(id, f) : one(id, f, len));
          continue;
        }
        // The singleton may have stood for its record's key too: that key needs its own entry now.
        if (this.keyOf[d] === t && !this.ids.has(t)) this.ids.set(t, d);
        const p = new Postings(2);
        p.push(d, singleTf(e), this.lenOf[d]);
        p.push(id, f, len);
        this.terms.set(t, p);
      } else e.push(id, f, len);
    }
    const own = this.terms.get(key);
    if (!(typeof own === 'number' && singleDoc(own) === id)) this.ids.set(key, id);
  }

  /** `content` is the record's current content: its terms say which postings hold the doc, so no term list is kept per doc. */
  remove(key: string, content: string): void {
    const id = this.docOf(key);
    if (id === undefined) return;
    this.ids.delete(key);
    this.keyOf[id] = undefined;
    this.metaOf[id] = undefined;
    this.live--;
    this.totalLen -= this.lenOf[id];
    this.mutations++;
    for (const t of this.weighted(key, content).keys()) {
      const e = this.terms.get(t);
      if (e === undefined) continue;
      if (typeof e === 'number') {
        if (singleDoc(e) === id) this.dropTerm(t);
        continue;
      }
      e.df--;
      e.dead++;
      if (e.df <= 0) this.dropTerm(t);
      else if (e.dead * 2 > e.n) this.compact(t, e);
    }
  }

  /** A term leaves the map; its prefix-dictionary entry goes stale (dropped at the next rebuild). */
  private dropTerm(t: string): void {
    this.terms.delete(t);
    if (this.byHead && t.length > 3) this.stale++;
  }

  private file(groups: Map<number, string[]>, t: string): void {
    const h = keyHead(t);
    const g = groups.get(h);
    if (g) g.push(t);
    else groups.set(h, [t]);
  }

  /**
   * Terms other than `prefix` that start with it (`prefix` has 4 or more units), in code-unit order.
   * Every such term shares the prefix's first three units, so it is in the prefix's keyHead() group:
   * the cost is that group, not the namespace's whole vocabulary (at 100,000 records the term map holds
   * 100,000 key terms besides the words, and scanning it was ~17 ms per one-word query). Why not one
   * sorted array with a binary search: sorting 200,000 terms took 230-360 ms at load ~15, once per
   * build or load, where grouping them is one pass of three charCodeAt and a Map lookup per term.
   * Terms whose first units are past keyHead()'s 10-bit range share a group; they cost a scan of it.
   * `scan` walks the whole term map instead: the reference the property tests compare with.
   */
  prefixMatches(prefix: string, scan = false): string[] {
    const out: string[] = [];
    if (scan) {
      for (const t of this.terms.keys()) if (t !== prefix && t.startsWith(prefix)) out.push(t);
    } else {
      if (!this.byHead || this.stale > 1024 + this.terms.size / 2) {
        const groups = new Map<number, string[]>();
        for (const t of this.terms.keys()) if (t.length > 3) this.file(groups, t);
        this.byHead = groups;
        this.stale = 0;
      }
      const group = this.byHead.get(keyHead(prefix));
      if (group) {
        for (const t of group) if (t !== prefix && t.startsWith(prefix) && this.terms.has(t)) out.push(t);
        // A term deleted and added again is in its group twice.
        if (this.stale) dedupe(out);
      }
    }
    // One order whatever the map's insertion history, so scores are summed alike on every path.
    return out.sort();
  }

  /** Drops dead entries of one term, recomputing its exact bounds; one live entry left becomes a packed singleton. */
  private compact(t: string, p: Postings): void {
    let w = 0;
    let maxTf = 0;
    let minLen = Number.POSITIVE_INFINITY;
    for (let r = 0; r < p.n; r++) {
      const d = p.docs[r];
      if (this.keyOf[d] === undefined) continue;
      const f = p.tfs[r];
      p.docs[w] = d;
      p.tfs[w++] = f;
      if (f > maxTf) maxTf = f;
      if (this.lenOf[d] < minLen) minLen = this.lenOf[d];
    }
    if (w === 0) {
      this.dropTerm(t);
      return;
    }
    if (w === 1 && canPackSingle(p.docs[0], p.tfs[0])) {
      this.terms.set(t, packSingle(p.docs[0], p.tfs[0]));
      return;
    }
    p.n = w;
    p.df = w;
    p.dead = 0;
    p.maxTf = maxTf;
    p.minLen = minLen;
    if (p.docs.length > 2 * w + 4) p.trim();
  }

  /** Gives live records ids 0..live-1 in their current order (so postings stay sorted) and drops every dead entry. */
  renumber(): void {
    const remap = new Int32Array(this.keyOf.length).fill(-1);
    const keyOf: string[] = [];
    const metaOf: (Record<string, unknown> | undefined)[] = [];
    const lenOf = new Int32Array(Math.max(16, this.live * 2));
    const updatedOf = new Float64Array(lenOf.length);
    const headOf = new Uint32Array(lenOf.length);
    for (let d = 0; d < this.keyOf.length; d++) {
      const key = this.keyOf[d];
      if (key === undefined) continue;
      const nd = keyOf.length;
      remap[d] = nd;
      keyOf.push(key);
      metaOf.push(this.metaOf[d]);
      lenOf[nd] = this.lenOf[d];
      updatedOf[nd] = this.updatedOf[d];
      headOf[nd] = this.headOf[d];
      if (this.ids.has(key)) this.ids.set(key, nd);
    }
    this.keyOf = keyOf;
    this.metaOf = metaOf;
    this.lenOf = lenOf;
    this.updatedOf = updatedOf;
    this.headOf = headOf;
    for (const [t, e] of this.terms) {
      if (typeof e === 'number') {
        const nd = remap[singleDoc(e)];
        if (nd < 0) this.dropTerm(t);
        else this.terms.set(t, packSingle(nd, singleTf(e)));
        continue;
      }
      let w = 0;
      for (let r = 0; r < e.n; r++) {
        const nd = remap[e.docs[r]];
        if (nd < 0) continue;
        e.docs[w] = nd;
        e.tfs[w++] = e.tfs[r];
      }
      e.n = w;
      e.dead = 0;
      e.df = w;
      this.compact(t, e); // exact bounds, singleton packing, trimming
    }
    this.mutations++;
  }

  /** Drops spare capacity after a bulk build. */
  trim(): void {
    for (const e of this.terms.values()) if (typeof e !== 'number') e.trim();
  }

  /** The state for the snapshot codec; dead ids are renumbered away first so a snapshot holds live records only. */
  parts(): IndexParts {
    if (this.live !== this.keyOf.length) this.renumber();
    return {
      keyOf: this.keyOf,
      lenOf: this.lenOf.subarray(0, this.keyOf.length),
      updatedOf: this.updatedOf.subarray(0, this.keyOf.length),
      metaOf: this.metaOf,
      terms: this.terms,
      totalLen: this.totalLen,
    };
  }

  /**
   * An index from decoded snapshot parts (every id live, postings exact). The decoder already knows
   * which records' keys are their own packed term (`ownTerm[d] === 1`: no `ids` entry needed) and the
   * distinct metadata values: with both, loading does not look up 100,000 keys again nor serialise
   * 100,000 metadata objects to intern ten distinct ones.
   */
  static fromParts(
    normalise: (t: string) => string | null,
    parts: IndexParts,
    known?: { ownTerm: Uint8Array; distinctMeta: Record<string, unknown>[] },
  ): Bm25Index {
    const idx = new Bm25Index(normalise);
    idx.keyOf = parts.keyOf;
    idx.metaOf = parts.metaOf;
    idx.lenOf = parts.lenOf;
    idx.updatedOf = parts.updatedOf;
    idx.headOf = new Uint32Array(parts.keyOf.length);
    for (let d = 0; d < parts.keyOf.length; d++) idx.headOf[d] = keyHead(parts.keyOf[d] as string);
    idx.terms = parts.terms;
    idx.totalLen = parts.totalLen;
    idx.live = parts.keyOf.length;
    for (let d = 0; d < parts.keyOf.length; d++) {
      const key = parts.keyOf[d] as string;
      if (known) {
        if (known.ownTerm[d] !== 1) idx.ids.set(key, d);
        continue;
      }
      const own = parts.terms.get(key);
      if (!(typeof own === 'number' && singleDoc(own) === d)) idx.ids.set(key, d);
    }
    const distinct = known?.distinctMeta ?? new Set(parts.metaOf);
    for (const m of distinct) if (m && idx.interned.size < INTERN_CAP) idx.interned.set(JSON.stringify(m), m);
    return idx;
  }

  metadataOf(key: string): Record<string, unknown> | undefined {
    const id = this.docOf(key);
    return id === undefined ? undefined : this.metaOf[id];
  }

  /** Live keys, newest update first (ties by key), for list pages. */
  keysByRecency(): string[] {
    const order: number[] = [];
    for (let d = 0; d < this.keyOf.length; d++) if (this.keyOf[d] !== undefined) order.push(d);
    const keyOf = this.keyOf as string[];
    const up = this.updatedOf;
    order.sort((a, b) => up[b] - up[a] || keyOf[a].localeCompare(keyOf[b]));
    return order.map((d) => keyOf[d]);
  }

  /** Live keys in doc-id order (vector ranking walks them). */
  *keys(): IterableIterator<string> {
    for (const k of this.keyOf) if (k !== undefined) yield k;
  }

  /** The query's terms with weights: duplicates add up; a one-word query of more than 3 letters also matches words it starts. */
  private queryTerms(query: string, scan: boolean): Map<string, number> {
    const toks = tokenise(query, this.normalise);
    const w = new Map<string, number>();
    for (const t of toks) w.set(t, (w.get(t) ?? 0) + 1);
    if (toks.length === 1 && toks[0].length > 3) {
      for (const t of this.prefixMatches(toks[0], scan)) w.set(t, PREFIX_WEIGHT);
    }
    return w;
  }

  /**
   * The query's terms with their postings and bounds, and the length normalisation of this moment:
   * a record of length `len` gets `w * tf / (tf + (na + nb * len))` from a term, which is BM25's
   * `weight * idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len / avg))` with the per-term and
   * per-query factors taken out of the loop. Both search paths compute it with exactly these
   * operations in this order, so they give identical floats.
   */
  private prepare(query: string, scan = false): { qts: QueryTerm[]; na: number; nb: number } {
    const avg = this.live ? this.totalLen / this.live : 1;
    const na = K1 * (1 - B);
    const nb = (K1 * B) / avg;
    const qts: QueryTerm[] = [];
    let order = 0;
    for (const [t, weight] of this.queryTerms(query, scan)) {
      const e = this.terms.get(t);
      if (e === undefined) continue;
      let docs: Int32Array;
      let tfs: TfArray;
      let n: number;
      let df: number;
      let maxTf: number;
      let minLen: number;
      if (typeof e === 'number') {
        const d = singleDoc(e);
        if (this.keyOf[d] === undefined) continue;
        docs = Int32Array.of(d);
        tfs = Uint8Array.of(singleTf(e));
        n = 1;
        df = 1;
        maxTf = tfs[0];
        minLen = this.lenOf[d];
      } else {
        ({ docs, tfs, n, df, maxTf, minLen } = e);
      }
      const idf = Math.log(1 + (this.live - df + 0.5) / (df + 0.5));
      const w = weight * idf * (K1 + 1);
      const ub = contribution(w, maxTf, na + nb * minLen) * UB_SLACK;
      qts.push({ docs, tfs, n, w, ub, order: order++, cursor: 0 });
    }
    return { qts, na, nb };
  }

  /**
   * Every match scored and sorted, prefix expansions found by scanning every term: the definition the
   * pruned search must agree with (tests and fallbacks only).
   */
  exhaustive(query: string, topK: number, accept: (key: string) => boolean = () => true): ScoredDoc[] {
    const { qts, na, nb } = this.prepare(query, true);
    const parts = new Map<number, number[]>();
    for (const q of qts) {
      for (let i = 0; i < q.n; i++) {
        const d = q.docs[i];
        if (this.keyOf[d] === undefined) continue;
        let arr = parts.get(d);
        if (!arr) parts.set(d, (arr = new Array<number>(qts.length).fill(0)));
        arr[q.order] = contribution(q.w, q.tfs[i], na + nb * this.lenOf[d]);
      }
    }
    const out: ScoredDoc[] = [];
    for (const [d, arr] of parts) {
      const key = this.keyOf[d] as string;
      if (accept(key)) out.push({ key, score: sum(arr) });
    }
    return out.sort(better).slice(0, topK);
  }

  /**
   * The best `topK` records that `accept` lets through, best first, by MaxScore over the query's postings.
   *
   * The loop runs once per candidate record, which for a query whose terms are in every record is every
   * record (issue 26's broad query): it allocates nothing, calls nothing but `advanceTo` and `accept`,
   * and keeps the heap's threshold in locals. A candidate is first bounded with its contributions in
   * bound order (for pruning), and only one that can still make the heap gets its exact score, summed in
   * query-term order from the contributions already computed (`part`, valid where `seen` is this record).
   */
  search(query: string, topK: number, accept?: (key: string) => boolean): ScoredDoc[] {
    if (topK <= 0) return [];
    const { qts, na, nb } = this.prepare(query);
    if (!qts.length) return [];
    const keyOf = this.keyOf;
    const lenOf = this.lenOf;
    const headOf = this.headOf;
    const m = qts.length;
    // Ascending upper bound: the non-essential terms are a prefix of this order.
    const byUb = [...qts].sort((a, b) => a.ub - b.ub);
    const prefixUb = new Float64Array(m);
    let acc = 0;
    for (let i = 0; i < m; i++) prefixUb[i] = acc += byUb[i].ub;
    const part = new Float64Array(m);
    const seen = new Int32Array(m).fill(-1);
    const heap = new TopK(topK);
    let firstEssential = 0;
    // The heap's worst entry once it is full; until then every candidate is admitted.
    let full = false;
    let threshold = Number.NEGATIVE_INFINITY;
    let thresholdKey = '';
    let thresholdHead = 0;
    for (;;) {
      // Next candidate: the smallest doc any essential term is on.
      let d = NO_DOC;
      for (let i = firstEssential; i < m; i++) {
        const q = byUb[i];
        if (q.cursor < q.n) {
          const x = q.docs[q.cursor];
          if (x < d) d = x;
        }
      }
      if (d === NO_DOC) break;
      const nrm = na + nb * lenOf[d];
      let partial = 0;
      for (let i = firstEssential; i < m; i++) {
        const q = byUb[i];
        if (q.cursor < q.n && q.docs[q.cursor] === d) {
          const tf = q.tfs[q.cursor];
          const c = (q.w * tf) / (tf + nrm); // contribution(), inline
          part[q.order] = c;
          seen[q.order] = d;
          partial += c;
          q.cursor++;
        }
      }
      const key = keyOf[d];
      if (key === undefined) continue;
      // Non-essential terms, largest bound first, each probed only while the record can still make the heap.
      let viable = true;
      for (let i = firstEssential - 1; i >= 0; i--) {
        if (full && partial + prefixUb[i] < threshold) {
          viable = false;
          break;
        }
        const q = byUb[i];
        advanceTo(q, d);
        if (q.cursor < q.n && q.docs[q.cursor] === d) {
          const tf = q.tfs[q.cursor];
          const c = (q.w * tf) / (tf + nrm);
          part[q.order] = c;
          seen[q.order] = d;
          partial += c;
        }
      }
      if (!viable || (full && partial * UB_SLACK < threshold)) continue;
      // The score is summed in query-term order, as the exhaustive path does, so both give identical floats.
      let score = 0;
      for (let j = 0; j < m; j++) if (seen[j] === d) score += part[j];
      // Ties rank by key (better()): an equal score enters only with a smaller key than the heap's worst,
      // compared by head first (the string is read only when the heads are equal).
      if (full && score <= threshold) {
        if (score < threshold) continue;
        const h = headOf[d];
        if (h > thresholdHead || (h === thresholdHead && key >= thresholdKey)) continue;
      }
      if (accept && !accept(key)) continue;
      heap.push({ key, score });
      if (heap.full) {
        full = true;
        const worst = heap.worst;
        threshold = worst.score;
        thresholdKey = worst.key;
        thresholdHead = keyHead(thresholdKey);
        while (firstEssential < m && prefixUb[firstEssential] < threshold) firstEssential++;
      }
    }
    return heap.sorted();
  }
}

function one(id: number, f: number, len: number): Postings {
  const p = new Postings(1);
  p.push(id, f, len);
  return p;
}

function grow<A extends Int32Array | Uint32Array | Float64Array>(a: A, cap: number): A {
  const out = (
    a instanceof Int32Array
      ? new Int32Array(cap)
      : a instanceof Uint32Array
        ? new Uint32Array(cap)
        : new Float64Array(cap)
  ) as A;
  out.set(a);
  return out;
}

/** Galloping then binary search to the first posting >= d: cheap for the short hops essential lists make. */
function advanceTo(q: QueryTerm, d: number): void {
  const docs = q.docs;
  if (q.cursor < q.n && docs[q.cursor] >= d) return;
  let lo = q.cursor;
  let step = 1;
  let hi = lo + step;
  while (hi < q.n && docs[hi] < d) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > q.n) hi = q.n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid] < d) lo = mid + 1;
    else hi = mid;
  }
  q.cursor = lo;
}

/** A term's BM25 contribution (see prepare()): rises with tf, falls as `nrm` (the record's length) grows. */
function contribution(w: number, tf: number, nrm: number): number {
  return (w * tf) / (tf + nrm);
}

/**
 * A key's first three UTF-16 code units in 10 bits each (30 bits), such that when two heads differ the
 * keys compare the same way: a missing unit counts as 0 (a key that is a prefix of a longer one is
 * smaller; a real U+0000 gives equal heads and a full comparison), and a unit of 1023 or more counts as
 * 1023 with every unit after it as 0 (two such keys get equal heads there, so their order is left to the
 * full comparison). Keys in ASCII, Latin, Greek or Cyrillic letters keep all three units.
 */
function keyHead(key: string): number {
  let head = 0;
  let open = true;
  for (let i = 0; i < 3; i++) {
    let u = open && i < key.length ? key.charCodeAt(i) : 0;
    if (u >= HEAD_UNIT_MAX) {
      u = HEAD_UNIT_MAX;
      open = false;
    }
    head = head * 1024 + u;
  }
  return head;
}
const HEAD_UNIT_MAX = 1023;

/** Past every doc id (ids are below 2^31). */
const NO_DOC = 0x7fffffff;

/** Removes repeats from a sorted-or-not list in place (small lists: the matches of one prefix). */
function dedupe(a: string[]): void {
  const seen = new Set<string>();
  let w = 0;
  for (const x of a) {
    if (seen.has(x)) continue;
    seen.add(x);
    a[w++] = x;
  }
  a.length = w;
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

  /** The worst of the best k (the root); only read once the heap is full. */
  get worst(): ScoredDoc {
    return this.h[0];
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

/**
 * Decodes n LEB128 varints from `buf` at `pos` into `out` (running sums when `gaps`: doc ids stored as gaps);
 * returns the position after the last. Multiplies rather than shifts: a value may pass 2^31.
 */
function decodeVarints(buf: Uint8Array, pos: number, out: Int32Array | TfArray, n: number, gaps: boolean): number {
  let sum = 0;
  for (let j = 0; j < n; j++) {
    let b = buf[pos++]!;
    let x = b & 0x7f;
    for (let shift = 7; b >= 0x80; shift += 7) {
      b = buf[pos++]!;
      x += (b & 0x7f) * 2 ** shift;
    }
    out[j] = gaps ? (sum += x) : x;
  }
  return pos;
}
