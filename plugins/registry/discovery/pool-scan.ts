/**
 * The document-side expansion's scan (meaning.ts): the dot product of one word's vector with every row of the
 * related-word pool, as WebAssembly SIMD. The same sums as the JavaScript loop it replaces, bit for bit: each f32
 * is widened to f64 (a product of two f32 is exact in f64), lanes 0-3 keep four accumulators over k mod 4 in the
 * same order, and the four are added ((a0 + a1) + a2) + a3 as `a0 + a1 + a2 + a3` is. Two lanes per instruction
 * and no bounds checks: ~10x less CPU per word than the JavaScript loop, which is what lets a catalog of 20,000
 * distinct words expand at its first build. The module is 200 bytes, written out below; no toolchain is involved.
 */

// dots(q, pool, n, dims, out): out[i] (f64) = q . pool row i (f32), for i < n; dims a multiple of 4; byte offsets.
// Locals: 5 i, 6 k (bytes), 7 p (row address), 8 acc lanes 0-1, 9 acc lanes 2-3 (f64x2).
const ZERO_F64 = [0x44, 0, 0, 0, 0, 0, 0, 0, 0];
// biome-ignore format: the bytes of one instruction stay on one line
const LOAD_PROMOTE = (base: number, offset: number) => [0x20, base, 0x20, 0x06, 0x6a, 0xfd, 0x00, 0x00, offset, 0xfd, 0x5f];
const MUL_ADD = [0xfd, 0xf2, 0x01, 0xfd, 0xf0, 0x01];
const LANE = (acc: number, lane: number) => [0x20, acc, 0xfd, 0x21, lane];
// biome-ignore format: one step of the function per line, as commented
const BODY = [
  0x02, 0x03, 0x7f, 0x02, 0x7b, // locals: 3 i32, 2 v128
  0x20, 0x01, 0x21, 0x07, // p = pool
  0x02, 0x40, 0x03, 0x40, // block, loop (rows)
  0x20, 0x05, 0x20, 0x02, 0x4e, 0x0d, 0x01, // if i >= n break
  ...ZERO_F64, 0xfd, 0x14, 0x21, 0x08, // acc01 = 0
  ...ZERO_F64, 0xfd, 0x14, 0x21, 0x09, // acc23 = 0
  0x41, 0x00, 0x21, 0x06, // k = 0
  0x03, 0x40, // loop (dims, four at a time)
  0x20, 0x08, ...LOAD_PROMOTE(0x00, 0), ...LOAD_PROMOTE(0x07, 0), ...MUL_ADD, 0x21, 0x08, // acc01 += q[k..k+1] * p[..]
  0x20, 0x09, ...LOAD_PROMOTE(0x00, 8), ...LOAD_PROMOTE(0x07, 8), ...MUL_ADD, 0x21, 0x09, // acc23 += q[k+2..k+3] * ..
  0x20, 0x06, 0x41, 0x10, 0x6a, 0x22, 0x06, // k += 16
  0x20, 0x03, 0x41, 0x02, 0x74, 0x48, 0x0d, 0x00, // while k < dims * 4
  0x0b,
  0x20, 0x04, 0x20, 0x05, 0x41, 0x03, 0x74, 0x6a, // &out[i]
  ...LANE(0x08, 0), ...LANE(0x08, 1), 0xa0, ...LANE(0x09, 0), 0xa0, ...LANE(0x09, 1), 0xa0, // ((a0 + a1) + a2) + a3
  0x39, 0x03, 0x00, // f64.store
  0x20, 0x07, 0x20, 0x03, 0x41, 0x02, 0x74, 0x6a, 0x21, 0x07, // p += dims * 4
  0x20, 0x05, 0x41, 0x01, 0x6a, 0x21, 0x05, // i++
  0x0c, 0x00, // next row
  0x0b, 0x0b, 0x0b,
];
const section = (id: number, bytes: number[]) => [id, ...leb(bytes.length), ...bytes];
const leb = (n: number) => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
// biome-ignore format: header, then one section per line (type, function, memory, exports, code)
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x01, 0x60, 0x05, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x00]),
  ...section(3, [0x01, 0x00]),
  ...section(5, [0x01, 0x00, 0x01]),
  ...section(7, [0x02, 0x04, 0x64, 0x6f, 0x74, 0x73, 0x00, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00]),
  ...section(10, [0x01, ...leb(BODY.length), ...BODY]),
]);

export interface PoolScan {
  /** Dot products of `q` (dims floats) with every pool row, in pool order; valid until the next call. */
  dots(q: Float32Array): Float64Array;
}

/**
 * A scanner over `pool` (rows x dims, row-major), or undefined where WebAssembly SIMD is not available (the caller
 * keeps its JavaScript loop) or dims is not a multiple of four.
 */
export function poolScan(pool: Float32Array, rows: number, dims: number): PoolScan | undefined {
  if (dims % 4 !== 0 || typeof WebAssembly === 'undefined' || !WebAssembly.validate(MODULE)) return undefined;
  const { dots, mem } = new WebAssembly.Instance(new WebAssembly.Module(MODULE)).exports as {
    dots: (q: number, pool: number, n: number, dims: number, out: number) => void;
    mem: WebAssembly.Memory;
  };
  // Layout: query (+16 bytes: the lanes-2-3 load of the last step reads 8 past it), pool, out.
  const qAt = 0;
  const poolAt = Math.ceil((dims * 4 + 16) / 16) * 16;
  const outAt = Math.ceil((poolAt + rows * dims * 4 + 16) / 16) * 16;
  const need = outAt + rows * 8;
  const pages = Math.ceil(need / 65_536) - mem.buffer.byteLength / 65_536;
  if (pages > 0) mem.grow(pages);
  new Float32Array(mem.buffer, poolAt, rows * dims).set(pool.subarray(0, rows * dims));
  const q32 = new Float32Array(mem.buffer, qAt, dims);
  const out = new Float64Array(mem.buffer, outAt, rows);
  return {
    dots(q) {
      q32.set(q);
      dots(qAt, poolAt, rows, dims, outAt);
      return out;
    },
  };
}
