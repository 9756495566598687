import t from 'tap';
import { FieldBm25 } from '../../plugins/registry/discovery/bm25.ts';
import type { Doc } from '../../plugins/registry/discovery/documents.ts';
import { DiscoveryEngine } from '../../plugins/registry/discovery/engine.ts';
import { stem, terms, words } from '../../plugins/registry/discovery/tokens.ts';
import { editDistance, NameVocabulary } from '../../plugins/registry/discovery/typo.ts';

/** The engine's parts on their own: words, typos, BM25 upkeep, replacing docs. */

t.test('words: identifiers split, whole forms kept, acronym plurals whole, abbreviations spelled out', async (t) => {
  t.same(words('getWeatherNow'), ['getweathernow', 'get', 'weather', 'now']);
  t.same(words('get_forecast'), ['get', 'forecast']);
  t.same(words('GitHub'), ['github', 'git', 'hub']);
  t.same(words('my PRs'), ['my', 'prs', 'pull', 'requests']);
  t.same(words('k8s pods'), ['k8s', 'kubernetes', 'pods']);
  t.equal(stem('forecasting'), stem('forecasts'));
  t.same(terms('the tools to get a forecast'), ['forecast'], 'stopwords and kind words leave, the rest is stemmed');
});

t.test('edit distance: transpositions are one edit, and the bound stops early', async (t) => {
  t.equal(editDistance('wether', 'weather', 2), 1);
  t.equal(editDistance('tranlsate', 'translate', 2), 1);
  t.equal(editDistance('kubernets', 'kubernetes', 2), 1);
  t.equal(editDistance('abc', 'xyz', 1), 2, 'over the bound: bound + 1');
  const v = new NameVocabulary();
  v.add(['calendar', 'weather', 'salesforce']);
  t.same(v.corrections('calender'), [{ word: 'calendar', distance: 1 }]);
  t.same(v.corrections('cat'), [], 'words under 4 letters are not corrected');
  v.remove(['calendar']);
  t.same(v.corrections('calender'), [], 'a removed word is no longer a correction');
});

t.test('BM25 after removals scores as a fresh index of the remaining docs', async (t) => {
  const docs = Array.from({ length: 60 }, (_, i) => ({
    name: `tool ${i % 7 === 0 ? 'weather' : 'other'} ${i}`,
    description: `describes ${['rain', 'sun', 'snow', 'wind'][i % 4]} and ${i % 3 ? 'forecast' : 'history'} number ${i}`,
  }));
  const live = new FieldBm25();
  docs.forEach((d, i) => {
    live.add(i, d);
  });
  const removed = new Set([3, 7, 14, 21, 22, 40]);
  for (const i of removed) live.remove(i);
  live.compact();
  const fresh = new FieldBm25();
  docs.forEach((d, i) => {
    if (!removed.has(i)) fresh.add(i, d);
  });
  const q = ['weather', 'forecast', 'rain'].map((term) => ({ term: stem(term), weight: 1, normWeight: 1 }));
  const run = (b: FieldBm25) => {
    const acc = new Float64Array(64);
    const touched: number[] = [];
    const norm = b.score(q, acc, touched);
    return { norm, scores: touched.sort((x, y) => x - y).map((s) => [s, acc[s]!.toFixed(9)]) };
  };
  t.same(run(live), run(fresh));
});

const doc = (id: string, name: string, description: string): Doc => ({
  id: `tool:/s#${id}`,
  kind: 'tool',
  key: '/s',
  name: id,
  title: name,
  fields: { name, description },
  gistFields: ['description'],
});

t.test('engine: replacing a group drops its old docs; unchanged text is not reindexed', async (t) => {
  const e = new DiscoveryEngine(undefined);
  const kinds = new Set(['tool'] as const);
  const find = (q: string) => e.search(q, { kinds, perKind: 10, allow: () => true }).map((h) => h.doc.id);
  e.replaceGroup('server:/s', [doc('a', 'get_forecast', 'weather forecast'), doc('b', 'send_sms', 'text message')]);
  t.same(find('weather forecast'), ['tool:/s#a']);
  const v = e.version;
  e.replaceGroup('server:/s', [doc('a', 'get_forecast', 'weather forecast'), doc('b', 'send_sms', 'text message')]);
  t.equal(e.version, v, 'same text: nothing reindexed');
  e.replaceGroup('server:/s', [doc('b', 'send_sms', 'text message to a phone')]);
  t.same(find('weather forecast'), [], 'a doc gone from its group is gone from the index');
  t.same(find('phone'), ['tool:/s#b']);
  t.same(find('get_forecast'), [], 'and its name too');
  e.replaceGroup('server:/s', []);
  t.equal(e.size, 0);
});
