import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { buildWordRelations } from '../../scripts/build-word-relations.mjs';
import type { Doc } from '../../plugins/registry/discovery/documents.ts';
import { DiscoveryEngine } from '../../plugins/registry/discovery/engine.ts';
import { parseWordRelationsInSlices, wordRelations } from '../../plugins/registry/discovery/word-relations.ts';
import { tempDir } from '../helpers/app.ts';

/**
 * WordNet relations: the cache script on a tiny database in WordNet's file format (offsets are what the lines
 * say, not byte positions, which the parser does not rely on), then the engine's use of them.
 */
const LICENCE = '  1 This software and database is being provided to you, the LICENSEE, by\n';
function dict(): string {
  const dir = join(tempDir('sb-wordnet-'), 'dict');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'data.verb'),
    LICENCE +
      '00000500 41 v 03 book 0 reserve 0 hold 2 001 + 00000600 n 0101 | arrange for\n' +
      '00000700 41 v 01 book 1 000 | record a charge\n',
  );
  writeFileSync(join(dir, 'data.adj'), LICENCE);
  writeFileSync(join(dir, 'data.adv'), LICENCE);
  writeFileSync(
    join(dir, 'index.noun'),
    `${LICENCE}japanese n 3 1 @ 3 0 00000100 00000300 00000400\naltaic n 1 0 1 0 00000200\n`,
  );
  writeFileSync(join(dir, 'index.verb'), `${LICENCE}book v 2 1 + 2 0 00000500 00000700\n`);
  writeFileSync(join(dir, 'index.adj'), LICENCE);
  writeFileSync(join(dir, 'index.adv'), LICENCE);
  // 100: japanese (the language), hypernym 200; 200: altaic, language; 300, 400: rarer senses of japanese;
  // 600: reservation, where a derivation pointer of book's first sense leads.
  writeFileSync(
    join(dir, 'data.noun'),
    `${LICENCE}${[
      '00000100 10 n 01 Japanese 0 001 @ 00000200 n 0000 | the language of Japan',
      '00000200 10 n 02 Altaic 0 natural_language 0 000 | a family of languages',
      '00000300 18 n 01 Japanese 1 000 | a native of Japan',
      '00000400 18 n 01 Nipponese 0 000 | a rarely used word',
      '00000600 04 n 01 reservation 0 000 | the act of reserving',
    ].join('\n')}\n`,
  );
  return dir;
}

t.test('the cache script keeps synonyms, hypernyms and derivations of the most frequent senses', async (t) => {
  const dir = dict();
  const lines = new Map(
    buildWordRelations(dir, 1)
      .trim()
      .split('\n')
      .map((l) => l.split('\t') as [string, string]),
  );
  t.same(lines.get('japanese')?.split(' '), ['altaic', 'natural', 'language'], 'hypernym words, multi-word split');
  t.same(lines.get('book')?.split(' '), ['reserve', 'hold', 'reservation'], 'synonyms and a derivation');
  const three = new Map(
    buildWordRelations(dir, 3)
      .trim()
      .split('\n')
      .map((l) => l.split('\t') as [string, string]),
  );
  t.ok(three.get('japanese')?.includes('nipponese'), 'more senses reach further');
  t.notOk(lines.get('japanese')?.includes('nipponese'), 'a sense past the limit is left out');
});

const doc = (id: string, description: string): Doc => ({
  id: `tool:/t#${id}`,
  kind: 'tool',
  key: '/t',
  name: id,
  title: id,
  fields: { name: id, description },
  gistFields: ['description'],
});

t.test('a query word reaches a doc through its WordNet relations, and only through them', async (t) => {
  const relations = await parseWordRelationsInSlices('book\treserve hold for\njapanese\tlanguage\n');
  t.same(relations('book'), ['reserve', 'hold', 'for']);
  t.same(relations('unknown'), []);
  const plain = new DiscoveryEngine(undefined);
  const related = new DiscoveryEngine(undefined);
  related.wordRelations = relations;
  const docs = [doc('translate', 'Translate text into another language'), doc('bake', 'Bakes bread and cakes')];
  for (const e of [plain, related]) e.replaceGroup('g', docs);
  const opts = { kinds: new Set(['tool'] as const), allow: () => true, perKind: 5, floor: 0 };
  const lexicalOf = (e: DiscoveryEngine) =>
    e.search('japanese', opts).find((h) => h.doc.id === 'tool:/t#translate')?.lexical ?? 0;
  t.equal(lexicalOf(plain), 0, '`japanese` shares no word with the doc');
  t.ok(lexicalOf(related) > 0, 'through `language`, it reaches it');
  t.notOk(
    related.search('japanese', opts).some((h) => h.doc.id === 'tool:/t#bake'),
    'an unrelated doc gains nothing',
  );
});

t.test('the real cache, when built, holds what the ranking relies on', async (t) => {
  const real = wordRelations();
  if (!real) throw new Error('word relations missing: node scripts/build-word-relations.mjs');
  t.ok(real('japanese').includes('language'), 'japanese -> language (hypernym)');
  t.ok(real('book').includes('reserve'), 'book -> reserve (synonym)');
});
