import { stemmer } from 'stemmer';

/**
 * Words and index terms. Names in a registry are identifiers (`get_weather`,
 * `createPullRequest`, `k8s-ops`), so they are split on case changes and
 * separators before anything else; people then type words, which the Porter
 * stemmer brings to one form (`forecasting` and `forecasts` -> `forecast`).
 */

/** Function words that say nothing about what an entity does; kept out of BM25 and embeddings alike. */
export const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could do does for from get give gives has have how i if in into is it its ' +
    'me my need needs of on or our please show so some something that the their them then there these this those to ' +
    'up us use used uses using want was we what when where which who will with would you your any all also just like ' +
    'one ones thing things way lets let help helps make makes tool tools server servers agent agents skill skills ' +
    'mcp find finds should someone somebody go through right now tell know see look looking anything stuff very ' +
    'much many really able'
  ).split(' '),
);

/**
 * Abbreviations people and catalogs write, spelled out beside the short form
 * (docs and queries alike), so `PRs` finds pull requests and `k8s` Kubernetes.
 * A Map, not an object: looked up by any word of a query, an object answered
 * `constructor` with Object.prototype's function (a 500 the route fuzzer found).
 */
export const EXPANSIONS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    pr: ['pull', 'request'],
    prs: ['pull', 'requests'],
    k8s: ['kubernetes'],
    db: ['database'],
    dbs: ['databases'],
    repo: ['repository'],
    repos: ['repositories'],
    docs: ['documentation'],
    msg: ['message'],
    i18n: ['internationalization', 'localization'],
    l10n: ['localization'],
    fx: ['foreign', 'exchange'],
    crm: ['customer', 'relationship', 'management'],
    seo: ['search', 'engine', 'optimization'],
    hr: ['human', 'resources'],
    sre: ['site', 'reliability'],
    vcs: ['version', 'control'],
  }),
);

/** Lowercase tokens split on anything but letters and digits, identifiers kept whole (`getweather`). */
export function rawWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/**
 * Lowercase words of a text: identifiers split on separators and case changes
 * (`getWeatherNow` -> getweathernow, get, weather, now: the whole form too,
 * since `GitHub` is typed `github`), abbreviations spelled out, stopwords kept.
 */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const token of text.split(/[^A-Za-z0-9]+/)) {
    if (!token) continue;
    const lower = token.toLowerCase();
    // Most tokens are lowercase or Capitalised: nothing to split, no regex to run.
    const rest = token.slice(1);
    if (rest === rest.toLowerCase()) {
      out.push(lower);
      const more = EXPANSIONS.get(lower);
      if (more) out.push(...more);
      continue;
    }
    // `PRs`, `APIs`: an acronym's plural is one word, not `p` + `rs`.
    const parts = /^[A-Z]+s$/.test(token)
      ? [lower]
      : token
          .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
          .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
          .toLowerCase()
          .split(' ');
    if (parts.length > 1) out.push(lower);
    for (const p of parts) {
      out.push(p);
      const more = EXPANSIONS.get(p);
      if (more) out.push(...more);
    }
  }
  return out;
}

const fieldWordsCache = new Map<string, readonly string[]>();
/** Field texts longer than this are split each time (a skill body is seldom repeated and would crowd the cache). */
const FIELD_CACHE_TEXT = 2_000;
const FIELD_CACHE_ENTRIES = 50_000;

/**
 * words() of a catalog field, memoised by text: a catalog repeats field texts (the same tool description on many
 * servers, a server's tags on each of its tools), and the index build splits each field of each doc. The array is
 * shared: callers must not change it.
 */
export function fieldWords(text: string): readonly string[] {
  if (text.length > FIELD_CACHE_TEXT) return words(text);
  let got = fieldWordsCache.get(text);
  if (!got) {
    got = words(text);
    // Cleared rather than evicted one by one: a rebuild refills it with what the catalog holds now.
    if (fieldWordsCache.size >= FIELD_CACHE_ENTRIES) fieldWordsCache.clear();
    fieldWordsCache.set(text, got);
  }
  return got;
}

/**
 * Empties fieldWords' memo. Called when a build or rebuild is done: the memo pays off while a whole catalog is
 * indexed in a row, and kept afterwards it would hold a word array per distinct text (tens of MB at 50,000 texts).
 */
export function forgetFieldWords(): void {
  fieldWordsCache.clear();
}

const stems = new Map<string, string>();
const termOfCache = new Map<string, string>();

/** A word's index term, or '' for a stopword: stem() and the stopword test in one lookup (BM25's hot loop). */
export function termOf(word: string): string {
  let t = termOfCache.get(word);
  if (t === undefined) {
    t = STOPWORDS.has(word) ? '' : stem(word);
    if (termOfCache.size < 200_000) termOfCache.set(word, t);
  }
  return t;
}

/** The index form of one word (memoised: a catalog repeats the same few thousand words). */
export function stem(word: string): string {
  let s = stems.get(word);
  if (s === undefined) {
    s = /^[a-z]+$/.test(word) && word.length > 3 ? stemmer(word) : word;
    if (stems.size < 200_000) stems.set(word, s);
  }
  return s;
}

/** Index terms of a text: words without stopwords, stemmed. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) if (!STOPWORDS.has(w)) out.push(stem(w));
  return out;
}
