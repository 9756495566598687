import { FieldBm25, type QueryTerm } from './bm25.ts';
import { type Doc, type EntityKind, type Field, FIELDS, gistOf, sameText } from './documents.ts';
import type { Embedder } from './embedder.ts';
import { alignScore, FUSION, fuse, semanticScore } from './fusion.ts';
import { EXPANSIONS, fieldWords, rawWords, STOPWORDS, stem, words } from './tokens.ts';
import { type PoolScan, poolScan } from './pool-scan.ts';
import { NameVocabulary } from './typo.ts';
import { context, type Entry, insert, KIND_WORDS, RERANK_FLOOR, RERANK_PER_KIND, round } from './ranking.ts';

export interface SearchOptions {
  kinds: ReadonlySet<EntityKind>;
  /** May this caller see this doc now (access, enabled, security hold)? Asked only of candidates. */
  allow: (doc: Doc) => boolean;
  /** Results kept per kind. */
  perKind: number;
  /** Default FUSION.floor; 0 returns everything that matched at all (the evaluation's recall view). */
  floor?: number;
}

export interface Hit {
  doc: Doc;
  relevance_score: number;
  lexical: number;
  semantic: number;
  match_context?: string;
}

/** Words in names, tool names and tags: what typo tolerance corrects towards. */
const NAME_FIELDS: readonly Field[] = ['name', 'tool_names', 'tags'];
/** The fields whose words are expanded with related words at index time. */
const RELATED_FROM: readonly Field[] = ['description', 'tags'];
/** Words of names and descriptions: where neighbours by meaning are looked for. */
const TEXT_FIELDS: readonly Field[] = ['name', 'description', 'tool_descriptions', 'tags'];
const pick = (fw: Partial<Record<Field, readonly string[]>>, fields: readonly Field[]) => {
  const out: string[] = [];
  for (const f of fields) {
    const ws = fw[f];
    if (ws) for (const w of ws) out.push(w);
  }
  return out;
};
/** A display name as words without separators: `GitHub`, `git-hub` and `github` are one name. */
const titleKey = (text: string) =>
  rawWords(text)
    .filter((w) => !STOPWORDS.has(w))
    .join('');

/**
 * The discovery index: field-weighted BM25, a name vocabulary for typos and a
 * flat table of unit vectors, all addressed by slot. Docs are replaced by id;
 * a doc whose text did not change (a health update) is left as it is.
 */
export class DiscoveryEngine {
  private readonly docs: (Doc | undefined)[] = [];
  private readonly slotOf = new Map<string, number>();
  private readonly groups = new Map<string, Set<string>>();
  private readonly titles: string[] = [];
  private readonly gistRows: (Int32Array | undefined)[] = [];
  private readonly bm25 = new FieldBm25();
  private readonly vocab = new NameVocabulary();
  private readonly textVocab = new NameVocabulary();
  private vectors: Float32Array;
  private hasVector: Uint8Array;
  private acc = new Float64Array(1024);
  private cosBuf = new Float32Array(1024);
  private next = 0;
  /** Bumped whenever a doc vector is written: the SIMD scanner's copy of the table is current only at this count. */
  private vectorWrites = 0;
  /** The doc-vector scan as WebAssembly SIMD (pool-scan.ts) over a copy of the table, made again after writes. */
  private scanner: { scan: PoolScan; rows: number; writes: number } | undefined;
  private simd = true;
  /** Bumped on every change: answers and tests can tell which index state they saw. */
  version = 0;

  constructor(readonly embedder: Embedder | undefined) {
    this.vectors = new Float32Array(1024 * (embedder?.dims ?? 0));
    this.hasVector = new Uint8Array(1024);
  }

  get size(): number {
    return this.slotOf.size;
  }

  get semantic(): boolean {
    return this.embedder !== undefined;
  }

  /** Puts the docs of one catalog record (`group`, e.g. `server:/github`) in place of the ones it had. */
  replaceGroup(group: string, docs: Doc[]): void {
    const old = this.groups.get(group);
    const ids = new Set(docs.map((d) => d.id));
    for (const id of old ?? []) if (!ids.has(id)) this.remove(id);
    for (const d of docs) this.upsert(d);
    if (docs.length) this.groups.set(group, ids);
    else this.groups.delete(group);
  }

  /** Every group, for a reload: groups not in `keep` are dropped. */
  groupNames(): string[] {
    return [...this.groups.keys()];
  }

  private upsert(doc: Doc): void {
    const had = this.slotOf.get(doc.id);
    if (had !== undefined && sameText(this.docs[had]!, doc)) {
      this.docs[had] = doc;
      return;
    }
    this.remove(doc.id);
    const slot = this.next++;
    this.grow(slot + 1);
    this.docs[slot] = doc;
    this.titles[slot] = titleKey(doc.title);
    this.slotOf.set(doc.id, slot);
    // Each field is split into words once, for BM25 and both vocabularies.
    const fw: Partial<Record<Field, readonly string[]>> = {};
    for (const f of FIELDS) if (doc.fields[f]) fw[f] = fieldWords(doc.fields[f]!);
    // Document-side expansion: the description's and tags' related words join the low-weight metadata field, so a
    // query in other words (`hire` for `hiring`, `download` for `upload`) meets the doc halfway. BM25 only: the
    // vocabularies, the vectors and the match context keep the doc's own words.
    const related = this.relatedWords?.(pick(fw, RELATED_FROM));
    this.bm25.addWords(slot, related?.length ? { ...fw, metadata: [...(fw.metadata ?? []), ...related] } : fw);
    this.vocab.add(pick(fw, NAME_FIELDS));
    this.textVocab.add(pick(fw, TEXT_FIELDS));
    const gist = [...words(doc.title), ...pick(fw, doc.gistFields)];
    // The second stage aligns query words with these: kept as vector rows so a search splits no doc text.
    this.gistRows[slot] = this.rowsOf?.(gist);
    const v = this.embedder?.embedWords ? this.embedder.embedWords(gist) : this.embedder?.embed(gistOf(doc));
    if (v) {
      this.vectors.set(v, slot * v.length);
      this.hasVector[slot] = 1;
      this.vectorWrites++;
    }
    this.version++;
  }

  /** Recomputes one doc's vector (its endpoint vector has arrived). */
  reembed(id: string): void {
    const slot = this.slotOf.get(id);
    const doc = slot === undefined ? undefined : this.docs[slot];
    if (slot === undefined || !doc) return;
    const v = this.embedder?.embed(gistOf(doc));
    if (v) {
      this.vectors.set(v, slot * v.length);
      this.hasVector[slot] = 1;
      this.vectorWrites++;
    }
  }

  private remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    const doc = this.docs[slot]!;
    this.bm25.remove(slot);
    const fw: Partial<Record<Field, readonly string[]>> = {};
    for (const f of FIELDS) if (doc.fields[f]) fw[f] = fieldWords(doc.fields[f]!);
    this.vocab.remove(pick(fw, NAME_FIELDS));
    this.textVocab.remove(pick(fw, TEXT_FIELDS));
    this.docs[slot] = undefined;
    this.titles[slot] = '';
    this.gistRows[slot] = undefined;
    this.hasVector[slot] = 0;
    this.slotOf.delete(id);
    this.version++;
  }

  private grow(n: number): void {
    if (n <= this.acc.length) return;
    let cap = this.acc.length;
    while (cap < n) cap *= 2;
    this.acc = new Float64Array(cap);
    this.cosBuf = new Float32Array(cap);
    const dims = this.embedder?.dims ?? 0;
    const v = new Float32Array(cap * dims);
    v.set(this.vectors);
    this.vectors = v;
    const h = new Uint8Array(cap);
    h.set(this.hasVector);
    this.hasVector = h;
  }

  /**
   * The query's terms. A word the index holds counts as typed. A word it does
   * not hold is typo-corrected towards names when it is not a common English
   * word, else stood in for by the index words nearest in meaning (`rain` ->
   * `precipitation`). Every typed word adds to the normaliser in proportion to
   * how much it says (its SIF weight: `tomorrow` little, `guitar` a lot), so a
   * query about something absent keeps a low lexical score.
   */
  private parse(query: string): { terms: QueryTerm[]; text: string; kindsNamed: Set<EntityKind> } {
    const out: QueryTerm[] = [];
    const text: string[] = [];
    const kindsNamed = new Set<EntityKind>();
    const typed = new Set<string>();
    for (const w of words(query)) {
      const hint = KIND_WORDS.get(w);
      if (hint) kindsNamed.add(hint);
      if (STOPWORDS.has(w) || typed.has(w) || w.length < 2) continue;
      typed.add(w);
      const t = stem(w);
      // An abbreviation the index lacks is carried by its spelled-out words (words() emitted them next).
      if (EXPANSIONS.has(w) && !this.bm25.has(t)) continue;
      const say = this.wordWeight?.(w) ?? 1;
      if (this.bm25.has(t)) {
        out.push({ term: t, weight: 1, normWeight: say });
        text.push(w);
        // Known words reach their neighbours too, at a lower weight: `store` a file also means `upload` it.
        for (const n of this.near(w))
          out.push({ term: stem(n.word), weight: n.weight * KNOWN_NEIGHBOUR, normWeight: 0 });
        continue;
      }
      const fixes = this.commonWord(w) ? [] : this.vocab.corrections(w);
      if (fixes.length) {
        const best = fixes[0]!.distance;
        const weight = best === 1 ? 0.85 : 0.7;
        fixes
          .filter((x) => x.distance === best)
          .forEach((f, i) => {
            out.push({ term: stem(f.word), weight, normWeight: i === 0 ? weight : 0 });
          });
        text.push(fixes[0]!.word);
        continue;
      }
      out.push({ term: t, weight: 1, normWeight: say });
      text.push(w);
      for (const n of this.near(w)) out.push({ term: stem(n.word), weight: n.weight, normWeight: 0 });
    }
    // A term reached twice (typed and as a neighbour) keeps its strongest reading.
    const seen = new Map<string, QueryTerm>();
    for (const q of out) {
      const s = seen.get(q.term);
      if (!s) seen.set(q.term, { ...q });
      else {
        s.weight = Math.max(s.weight, q.weight);
        s.normWeight = Math.max(s.normWeight, q.normWeight);
      }
    }
    return { terms: [...seen.values()], text: text.join(' '), kindsNamed };
  }

  /** A query word's neighbours by meaning (word vectors) and its WordNet relations, each with its weight. */
  private near(w: string): { word: string; weight: number }[] {
    const out = this.neighbours?.(w) ?? [];
    // Only relations the index holds become terms (the others could match nothing). Not capped per word: caps of
    // 4-15 held terms lost the skill-intent gain (`blind` -> `sightless` comes late in the list).
    for (const r of this.wordRelations?.(w) ?? [])
      if (r.length > 2 && !STOPWORDS.has(r) && this.bm25.has(stem(r))) out.push({ word: r, weight: RELATION_WEIGHT });
    return out;
  }

  private commonWord(w: string): boolean {
    return this.embedderKnows?.(w) ?? false;
  }

  /** Set by the lifecycle: does the word-vector vocabulary hold `w` among its most common words? */
  embedderKnows?: (w: string) => boolean;
  /** Set by the lifecycle: how much a typed word says, in (0, 1]. */
  wordWeight?: (w: string) => number;
  /** Set by the lifecycle: how well the query's words find their like among a doc's words, in [0, 1]. */
  align?: (queryWords: readonly string[]) => (docRows: Int32Array) => number;
  /** Set by the lifecycle: the word-vector rows of a doc's words (unique, stopwords left out). */
  rowsOf?: (ws: readonly string[]) => Int32Array;
  /** Set by the lifecycle: words related in meaning to a doc's own words (document-side expansion). */
  relatedWords?: (ws: readonly string[]) => string[];
  /** Set by the lifecycle: a word's WordNet synonyms, hypernyms and derivations (word-relations.ts). */
  wordRelations?: (w: string) => readonly string[];
  /** Set by the lifecycle: index words nearest in meaning to a word the index lacks. */
  neighbours?: (w: string) => { word: string; weight: number }[];

  /** Words of names and descriptions (not bodies): where neighbours by meaning are looked for. */
  indexWords(): Iterable<string> {
    return this.textVocab.words();
  }

  /** Cosine of every doc with the query into cosBuf; docs above `min` into `near`. Unrolled by four: the hot loop. */
  private scan(qv: Float32Array, min: number, near: number[]): void {
    const dims = qv.length;
    const vec = this.vectors;
    const has = this.hasVector;
    const cos = this.cosBuf;
    const n = this.next;
    const dots = this.simdDots(qv, n);
    if (dots) {
      // The same sums as the loop below, bit for bit (pool-scan.ts keeps its order), ~4x less CPU per query.
      for (let s = 0; s < n; s++) {
        if (!has[s]) {
          cos[s] = 0;
          continue;
        }
        const dot = dots[s]!;
        cos[s] = dot;
        if (dot > min) near.push(s);
      }
      return;
    }
    const four = dims - (dims % 4);
    for (let s = 0; s < n; s++) {
      if (!has[s]) {
        cos[s] = 0;
        continue;
      }
      const base = s * dims;
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let d = 0; d < four; d += 4) {
        a0 += qv[d]! * vec[base + d]!;
        a1 += qv[d + 1]! * vec[base + d + 1]!;
        a2 += qv[d + 2]! * vec[base + d + 2]!;
        a3 += qv[d + 3]! * vec[base + d + 3]!;
      }
      for (let d = four; d < dims; d++) a0 += qv[d]! * vec[base + d]!;
      const dot = a0 + a1 + a2 + a3;
      cos[s] = dot;
      if (dot > min) near.push(s);
    }
  }

  /**
   * Dot products of the query with the first n doc vectors through the SIMD scanner, or undefined where it is not
   * available (no WebAssembly SIMD, dims not a multiple of four). The scanner holds a copy of the table (dims x 4
   * bytes per doc), made again on the first search after vectors were written: a burst of writes costs one copy.
   */
  private simdDots(qv: Float32Array, n: number): Float64Array | undefined {
    if (!this.simd || n === 0) return undefined;
    const sc = this.scanner;
    if (!sc || sc.rows !== n || sc.writes !== this.vectorWrites) {
      this.scanner = undefined; // the old copy goes before the new one is made
      const scan = poolScan(this.vectors, n, qv.length);
      if (!scan) {
        this.simd = false;
        return undefined;
      }
      this.scanner = { scan, rows: n, writes: this.vectorWrites };
    }
    return this.scanner!.scan.dots(qv);
  }

  search(query: string, opts: SearchOptions): Hit[] {
    const { terms: qterms, text, kindsNamed } = this.parse(query);
    const touched: number[] = [];
    const acc = this.acc;
    const cos = this.cosBuf;
    const norm = qterms.length ? this.bm25.score(qterms, acc, touched) : 0;
    for (const s of touched) acc[s] = norm > 0 ? Math.min(1, acc[s]! / norm) : 0;
    const near: number[] = [];
    const floor = opts.floor ?? FUSION.floor;
    const qv = text ? this.embedder?.embed(text) : undefined;
    if (qv) {
      // Every doc's cosine lands in cos[] (a doc the lexical side found reads it there). A doc the lexical side did
      // not find needs a cosine that can reach the floor alone to be a candidate at all.
      const needed =
        FUSION.cosZero + (floor / (FUSION.semanticWeight * FUSION.kindHint)) * (FUSION.cosFull - FUSION.cosZero);
      this.scan(qv, Math.max(FUSION.cosZero, needed), near);
    }
    const qTitle = titleKey(query);
    const fixedTitle = titleKey(text);
    // Two stages: a wide first cut on the cheap evidence, then the candidates re-scored with word alignment.
    const align = this.align;
    const k = align ? Math.max(opts.perKind, RERANK_PER_KIND) : opts.perKind;
    const firstFloor = align ? floor * RERANK_FLOOR : floor;
    // Per kind, the best k so far (descending); allow() is asked only of a doc that would enter it.
    const best = new Map<EntityKind, Entry[]>();
    const nameMatchOf = (s: number) => {
      const title = this.titles[s]!;
      return title !== '' && (title === qTitle || title === fixedTitle);
    };
    const scoreOf = (kind: EntityKind, l: number, sem: number, nameMatch: boolean) => {
      let score = fuse(l, sem, nameMatch);
      // "an agent that ...", "a skill for ...": the kind asked for ranks above the others at equal evidence.
      if (kindsNamed.size && kindsNamed.has(kind)) score = Math.min(1, score * FUSION.kindHint);
      return round(score);
    };
    const consider = (s: number) => {
      const doc = this.docs[s];
      if (!doc || !opts.kinds.has(doc.kind)) return;
      const l = acc[s]!;
      const sem = qv ? semanticScore(cos[s]!) : 0;
      const score = scoreOf(doc.kind, l, sem, nameMatchOf(s));
      if (score < firstFloor || score === 0) return;
      let list = best.get(doc.kind);
      if (!list) best.set(doc.kind, (list = []));
      const last = list[list.length - 1];
      if (
        list.length >= k &&
        last &&
        (score < last.score || (score === last.score && doc.id > this.docs[last.slot]!.id))
      )
        return;
      if (!opts.allow(doc)) return;
      insert(list, { slot: s, score, l, sem }, k, this.docs);
    };
    for (const s of touched) consider(s);
    for (const s of near) if (acc[s] === 0) consider(s);
    for (const s of touched) acc[s] = 0;
    const hits: Hit[] = [];
    const qWords = align ? words(text).filter((w) => !STOPWORDS.has(w)) : [];
    const against = align && qWords.length ? align(qWords) : undefined;
    for (const [kind, list] of best) {
      let out = list;
      if (against) {
        out = [];
        for (const e of list) {
          const rows = this.gistRows[e.slot];
          const a = rows ? alignScore(against(rows)) : 0;
          const sem =
            FUSION.alignBlend > 0 ? (1 - FUSION.alignBlend) * e.sem + FUSION.alignBlend * a : Math.max(e.sem, a);
          const score = scoreOf(kind, e.l, sem, nameMatchOf(e.slot));
          if (score >= floor && score > 0) insert(out, { ...e, score, sem }, opts.perKind, this.docs);
        }
      }
      for (const e of out.slice(0, opts.perKind))
        hits.push({ doc: this.docs[e.slot]!, relevance_score: e.score, lexical: e.l, semantic: e.sem });
    }
    hits.sort((a, b) => b.relevance_score - a.relevance_score || a.doc.id.localeCompare(b.doc.id));
    const qset = new Set(qterms.map((q) => q.term));
    for (const h of hits) h.match_context = context(h.doc, qset);
    return hits;
  }
}

/** How much a neighbour of a word the index knows counts, against one of a word it lacks. */
const KNOWN_NEIGHBOUR = 0.35;
/**
 * How much a WordNet relation of a query word counts against the word as typed (times KNOWN_NEIGHBOUR when the
 * index holds the word itself). Set by a coarse grid on the development set (0.25-0.4 x 1-5 senses, see
 * docs/discovery.md) after its queries were written.
 */
const RELATION_WEIGHT = 0.4;
