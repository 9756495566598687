import {
  Bm25Index,
  canPackSingle,
  type IndexParts,
  Postings,
  packSingle,
  singleDoc,
  singleTf,
  type TermEntry,
} from './bm25-index.ts';

/**
 * The binary form of a namespace index, persisted so a restart or another
 * replica loads it instead of re-reading and re-tokenising every record.
 *
 * Layout (little-endian; "v" is an unsigned LEB128 varint):
 *   "SBI2"                            magic and format version (SBI1 had no key-term group)
 *   v docs, f64 totalLen
 *   v bytes, UTF-8 of every key joined; then per doc v key length in UTF-16 units
 *   per doc: v weighted length; per doc: f64 updated ms
 *   v distinct metadata values, each v bytes + UTF-8 JSON; then per doc v (value index + 1, 0 = none)
 *   v key terms (a record's key as its own term, in that record only), each v doc, v tf
 *   v other terms, v bytes, UTF-8 of their names joined; then per term v length in UTF-16 units
 *   per other term: v n; n = 1: v doc, v tf; n > 1: v maxTf, v minLen, n doc-id gaps, n tfs
 * Strings are joined into one block so loading decodes two big strings instead of
 * 200,000 small ones. Doc-id gaps make the postings mostly one byte each.
 */
export const SNAPSHOT_FORMAT = 'SBI2';

/** Work between two yields to the event loop, so a build or load never holds other requests up for long. */
const SLICE_MS = 4;

/** In `u` mode a paired surrogate is one code point, so only a lone half matches. */
const LONE_SURROGATE = /\p{Cs}/u;

export const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

/** A clock that says when the current slice is used up; `await tick()` yields then. */
function slicer(): () => Promise<void> | undefined {
  let start = performance.now();
  let n = 0;
  return () => {
    if ((++n & 63) !== 0 || performance.now() - start < SLICE_MS) return undefined;
    return yieldToLoop().then(() => {
      start = performance.now();
    });
  };
}

class Writer {
  buf = Buffer.allocUnsafe(1 << 20);
  pos = 0;

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  v(x: number): void {
    this.room(10);
    while (x >= 0x80) {
      this.buf[this.pos++] = (x % 0x80) | 0x80;
      x = Math.floor(x / 0x80);
    }
    this.buf[this.pos++] = x;
  }

  f64(x: number): void {
    this.room(8);
    this.buf.writeDoubleLE(x, this.pos);
    this.pos += 8;
  }

  str(s: string): void {
    const n = Buffer.byteLength(s);
    this.v(n);
    this.room(n);
    this.pos += this.buf.write(s, this.pos);
  }

  raw(s: string): void {
    this.room(s.length);
    this.buf.write(s, this.pos, 'latin1');
    this.pos += s.length;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  v(): number {
    let x = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('index snapshot truncated');
      const b = this.buf[this.pos++];
      x += (b & 0x7f) * mul;
      if (b < 0x80) return x;
      mul *= 0x80;
    }
  }

  f64(): number {
    const x = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return x;
  }

  str(): string {
    const n = this.v();
    if (this.pos + n > this.buf.length) throw new Error('index snapshot truncated');
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
}

/**
 * The index as bytes, or undefined when it cannot be written faithfully: it changed
 * while being encoded (the encoder yields between slices), or a key or term is not
 * well-formed UTF-16 (a lone surrogate would not survive UTF-8).
 */
export async function encodeIndex(index: Bm25Index): Promise<Buffer | undefined> {
  const p: IndexParts = index.parts();
  const at = index.mutations;
  const tick = slicer();
  const w = new Writer();
  w.raw(SNAPSHOT_FORMAT);
  const docs = p.keyOf.length;
  w.v(docs);
  w.f64(p.totalLen);
  const keys = p.keyOf as string[];
  const keyBlock = keys.join('');
  if (LONE_SURROGATE.test(keyBlock)) return undefined;
  w.str(keyBlock);
  for (const k of keys) w.v(k.length);
  for (let d = 0; d < docs; d++) w.v(p.lenOf[d]);
  for (let d = 0; d < docs; d++) w.f64(p.updatedOf[d]);
  const metaIndex = new Map<Record<string, unknown>, number>();
  const metaJson: string[] = [];
  for (const m of p.metaOf) {
    if (m && !metaIndex.has(m)) {
      metaIndex.set(m, metaJson.length);
      metaJson.push(JSON.stringify(m));
    }
  }
  w.v(metaJson.length);
  for (const j of metaJson) w.str(j);
  for (const m of p.metaOf) w.v(m ? (metaIndex.get(m) as number) + 1 : 0);
  await tick();
  if (index.mutations !== at) return undefined;

  // Terms that are their record's key (one token, in no other record) are written as doc and count only:
  // the loader takes the name from the key, so the string is not stored twice nor held twice.
  const keyTerms: number[] = [];
  const names: string[] = [];
  for (const [t, e] of p.terms) {
    if (typeof e === 'number' && keys[singleDoc(e)] === t) keyTerms.push(e);
    else names.push(t);
  }
  w.v(keyTerms.length);
  for (const e of keyTerms) {
    w.v(singleDoc(e));
    w.v(singleTf(e));
  }
  const nameBlock = names.join('');
  if (LONE_SURROGATE.test(nameBlock)) return undefined;
  w.v(names.length);
  w.str(nameBlock);
  for (const t of names) w.v(t.length);
  for (const t of names) {
    const e = p.terms.get(t) as TermEntry;
    if (typeof e === 'number') {
      w.v(1);
      w.v(singleDoc(e));
      w.v(singleTf(e));
    } else {
      w.v(e.n);
      if (e.n === 1) {
        w.v(e.docs[0]);
        w.v(e.tfs[0]);
      } else {
        w.v(e.maxTf);
        w.v(e.minLen);
        let prev = 0;
        for (let i = 0; i < e.n; i++) {
          w.v(e.docs[i] - prev);
          prev = e.docs[i];
        }
        for (let i = 0; i < e.n; i++) w.v(e.tfs[i]);
      }
    }
    const pause = tick();
    if (pause) {
      await pause;
      if (index.mutations !== at) return undefined;
    }
  }
  return w.done();
}

function single(d: number, f: number, len: number): TermEntry {
  if (canPackSingle(d, f)) return packSingle(d, f);
  const p = new Postings(1);
  p.push(d, f, len);
  return p;
}

/** An index from snapshot bytes, decoded in slices; throws on bytes that are not a snapshot of this format. */
export async function decodeIndex(bytes: Buffer, normalise: (t: string) => string | null): Promise<Bm25Index> {
  const r = new Reader(bytes);
  if (bytes.toString('latin1', 0, 4) !== SNAPSHOT_FORMAT) throw new Error('not an index snapshot of this format');
  r.pos = 4;
  const tick = slicer();
  const docs = r.v();
  const totalLen = r.f64();
  const keyBlock = r.str();
  const keyOf: string[] = new Array(docs);
  let off = 0;
  for (let d = 0; d < docs; d++) {
    const n = r.v();
    keyOf[d] = keyBlock.slice(off, off + n);
    off += n;
    const pause = tick();
    if (pause) await pause;
  }
  const lenOf = new Int32Array(docs);
  for (let d = 0; d < docs; d++) lenOf[d] = r.v();
  await tick();
  const updatedOf = new Float64Array(docs);
  for (let d = 0; d < docs; d++) updatedOf[d] = r.f64();
  const metaValues: Record<string, unknown>[] = [];
  const distinct = r.v();
  for (let i = 0; i < distinct; i++) metaValues.push(JSON.parse(r.str()) as Record<string, unknown>);
  const metaOf: (Record<string, unknown> | undefined)[] = new Array(docs);
  for (let d = 0; d < docs; d++) {
    const m = r.v();
    metaOf[d] = m ? metaValues[m - 1] : undefined;
  }
  await tick();

  const terms = new Map<string, TermEntry>();
  const keyTerms = r.v();
  for (let i = 0; i < keyTerms; i++) {
    const d = r.v();
    const f = r.v();
    if (d >= docs) throw new Error('index snapshot names a record it does not hold');
    terms.set(keyOf[d], single(d, f, lenOf[d]));
    const pause = tick();
    if (pause) await pause;
  }
  const count = r.v();
  const nameBlock = r.str();
  const names: string[] = new Array(count);
  off = 0;
  for (let i = 0; i < count; i++) {
    const n = r.v();
    names[i] = nameBlock.slice(off, off + n);
    off += n;
  }
  const buf = bytes;
  for (let i = 0; i < count; i++) {
    const n = r.v();
    if (n === 1) {
      const d = r.v();
      terms.set(names[i], single(d, r.v(), lenOf[d]));
    } else {
      const maxTf = r.v();
      const minLen = r.v();
      if (r.pos + 2 * n > buf.length) throw new Error('index snapshot truncated');
      const p = new Postings(n);
      // Varints read inline: this loop is most of a load's work.
      let pos = r.pos;
      let d = 0;
      const docsOut = p.docs;
      for (let j = 0; j < n; j++) {
        let b = buf[pos++];
        let x = b & 0x7f;
        for (let shift = 7; b >= 0x80; shift += 7) {
          b = buf[pos++];
          x += (b & 0x7f) * 2 ** shift;
        }
        docsOut[j] = d += x;
      }
      if (maxTf > 0xff) p.tfs = maxTf > 0xffff ? new Uint32Array(n) : new Uint16Array(n);
      const tfsOut = p.tfs;
      for (let j = 0; j < n; j++) {
        let b = buf[pos++];
        let x = b & 0x7f;
        for (let shift = 7; b >= 0x80; shift += 7) {
          b = buf[pos++];
          x += (b & 0x7f) * 2 ** shift;
        }
        tfsOut[j] = x;
      }
      if (pos > buf.length || d >= docs) throw new Error('index snapshot postings are out of range');
      r.pos = pos;
      p.n = n;
      p.df = n;
      p.maxTf = maxTf;
      p.minLen = minLen;
      terms.set(names[i], p);
    }
    const pause = tick();
    if (pause) await pause;
  }
  if (r.pos !== bytes.length) throw new Error('index snapshot has trailing bytes');
  return Bm25Index.fromParts(normalise, { keyOf, lenOf, updatedOf, metaOf, terms, totalLen });
}
