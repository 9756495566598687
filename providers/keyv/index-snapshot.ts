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
 * Layout (little-endian; "v" is an unsigned LEB128 varint; "raw T[n]" is n values as a typed array's bytes):
 *   "SBI3"                            magic and format version
 *   v docs, f64 totalLen
 *   v bytes, UTF-8 of a JSON array of every key
 *   raw Int32[docs] weighted lengths; raw Float64[docs] updated ms
 *   v distinct metadata values, each v bytes + UTF-8 JSON; then raw Uint32[docs] (value index + 1, 0 = none)
 *   v key terms (a record's key as its own term, in that record only), raw Int32[key terms] packed doc and tf
 *   v other terms, v bytes, UTF-8 of their names joined; then per term v length in UTF-16 units
 *   per other term: v n; n = 1: v doc, v tf; n > 1: v maxTf, v minLen, n doc-id gaps, n tfs
 * What is one value per record is a typed array copied in one call and the keys are one JSON.parse: a
 * cold start decodes once per process, in code the JIT has not optimised yet, so loops of 100,000
 * small steps (SBI2 had varints per record and per key) cost more there than the bytes they saved
 * (snapshots are stored deflated, snapshot-store.ts). Doc-id gaps keep the postings mostly one byte each.
 */
export const SNAPSHOT_FORMAT = 'SBI3';

/** Typed arrays are written in the host's byte order, which the layout fixes as little-endian. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

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

  /** A typed array's bytes as they are in memory (little-endian on every host that writes snapshots). */
  typed(a: Int32Array | Uint32Array | Float64Array): void {
    this.room(a.byteLength);
    this.buf.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), this.pos);
    this.pos += a.byteLength;
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

  /** `n` values of a typed array, copied out of the buffer in one call (a fresh, aligned ArrayBuffer). */
  typed<T>(make: (b: ArrayBuffer) => T, bytesPer: number, n: number): T {
    const end = this.pos + n * bytesPer;
    if (end > this.buf.length) throw new Error('index snapshot truncated');
    const copy = new Uint8Array(end - this.pos);
    copy.set(this.buf.subarray(this.pos, end));
    this.pos = end;
    return make(copy.buffer);
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
  if (!LITTLE_ENDIAN) return undefined;
  const p: IndexParts = index.parts();
  const at = index.mutations;
  const tick = slicer();
  const w = new Writer();
  w.raw(SNAPSHOT_FORMAT);
  const docs = p.keyOf.length;
  w.v(docs);
  w.f64(p.totalLen);
  const keys = p.keyOf as string[];
  // JSON escapes a lone surrogate (\udXXX), so every key survives the UTF-8 round trip.
  w.str(JSON.stringify(keys));
  w.typed(p.lenOf.subarray(0, docs));
  w.typed(p.updatedOf.subarray(0, docs));
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
  const metaRef = new Uint32Array(docs);
  for (let d = 0; d < docs; d++) {
    const m = p.metaOf[d];
    if (m) metaRef[d] = (metaIndex.get(m) as number) + 1;
  }
  w.typed(metaRef);
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
  w.typed(Int32Array.from(keyTerms));
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
  if (!LITTLE_ENDIAN) throw new Error('index snapshots are read on little-endian hosts only');
  const docs = r.v();
  const totalLen = r.f64();
  const keyOf = JSON.parse(r.str()) as string[];
  if (!Array.isArray(keyOf) || keyOf.length !== docs) throw new Error('index snapshot keys do not match its records');
  const lenOf = r.typed((b) => new Int32Array(b), 4, docs);
  const updatedOf = r.typed((b) => new Float64Array(b), 8, docs);
  const metaValues: Record<string, unknown>[] = [];
  const distinct = r.v();
  for (let i = 0; i < distinct; i++) metaValues.push(JSON.parse(r.str()) as Record<string, unknown>);
  const metaRef = r.typed((b) => new Uint32Array(b), 4, docs);
  const metaOf: (Record<string, unknown> | undefined)[] = new Array(docs);
  for (let d = 0; d < docs; d++) {
    const m = metaRef[d];
    metaOf[d] = m ? metaValues[m - 1] : undefined;
  }
  await tick();

  const terms = new Map<string, TermEntry>();
  const ownTerm = new Uint8Array(docs);
  const keyTerms = r.v();
  const packed = r.typed((b) => new Int32Array(b), 4, keyTerms);
  for (let i = 0; i < keyTerms; i++) {
    const e = packed[i];
    const d = singleDoc(e);
    if (e < 0 || d >= docs) throw new Error('index snapshot names a record it does not hold');
    terms.set(keyOf[d], e);
    ownTerm[d] = 1;
    const pause = tick();
    if (pause) await pause;
  }
  const count = r.v();
  const nameBlock = r.str();
  const names: string[] = new Array(count);
  let off = 0;
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
      // Checked here (doc ids in range, counts within maxTf, every varint complete) but not decoded: the
      // bytes are copied out for Postings to decode on first use, so a cold start decodes only what it uses.
      let pos = r.pos;
      let d = 0;
      for (let j = 0; j < n; j++) {
        let b = buf[pos++];
        let x = b & 0x7f;
        for (let shift = 7; b >= 0x80; shift += 7) {
          b = buf[pos++];
          x += (b & 0x7f) * 2 ** shift;
        }
        d += x;
      }
      let top = 0;
      for (let j = 0; j < n; j++) {
        let b = buf[pos++];
        let x = b & 0x7f;
        for (let shift = 7; b >= 0x80; shift += 7) {
          b = buf[pos++];
          x += (b & 0x7f) * 2 ** shift;
        }
        if (x > top) top = x;
      }
      if (pos > buf.length || d >= docs || top > maxTf) throw new Error('index snapshot postings are out of range');
      // A copy (Buffer's slice shares memory): undecoded terms must not keep the whole snapshot alive.
      const p = Postings.packed(new Uint8Array(buf.subarray(r.pos, pos)), n, maxTf, minLen);
      r.pos = pos;
      terms.set(names[i], p);
    }
    const pause = tick();
    if (pause) await pause;
  }
  if (r.pos !== bytes.length) throw new Error('index snapshot has trailing bytes');
  // Every term once (encodeIndex writes each map entry once): a repeated name would have replaced a key
  // term's entry, and `ownTerm` would then say a key needs no `ids` entry when it does.
  if (terms.size !== keyTerms + count) throw new Error('index snapshot repeats a term');
  return Bm25Index.fromParts(
    normalise,
    { keyOf, lenOf, updatedOf, metaOf, terms, totalLen },
    { ownTerm, distinctMeta: metaValues },
  );
}
