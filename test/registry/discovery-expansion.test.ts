import t from 'tap';
import type { Doc } from '../../plugins/registry/discovery/documents.ts';
import { SifEmbedder } from '../../plugins/registry/discovery/embedder.ts';
import { DiscoveryEngine } from '../../plugins/registry/discovery/engine.ts';
import { attachWordKnowledge } from '../../plugins/registry/discovery/meaning.ts';
import { WORD_VECTORS_BUILD_COMMAND, wordVectors } from '../../plugins/registry/discovery/word-vectors.ts';

/** Document-side expansion with the real word vectors: a doc's words bring their related words into its BM25 entry. */

const doc = (id: string, description: string): Doc => ({
  id: `tool:/t#${id}`,
  kind: 'tool',
  key: '/t',
  name: id,
  title: id,
  fields: { name: id, description },
  gistFields: ['description'],
});

t.test('a doc is found lexically by a word related to its own, and only through the expansion', async (t) => {
  const wv = wordVectors();
  if (!wv) throw new Error(`word vectors missing: ${WORD_VECTORS_BUILD_COMMAND}`);
  const plain = new DiscoveryEngine(new SifEmbedder(wv));
  const expanded = new DiscoveryEngine(new SifEmbedder(wv));
  attachWordKnowledge(expanded, wv);

  t.ok(expanded.relatedWords!(['hiring']).includes('hire'), 'hiring brings hire');
  t.same(expanded.relatedWords!(['the', 'use']), [], 'stopwords and the commonest words bring nothing');
  t.notOk(
    expanded.relatedWords!(['hiring', 'hire']).includes('hire'),
    "a doc's own word is not added again as related",
  );

  const docs = [doc('screen', 'Screens candidates for hiring managers'), doc('bake', 'Bakes bread and cakes')];
  for (const e of [plain, expanded]) e.replaceGroup('g', docs);
  const opts = { kinds: new Set(['tool'] as const), allow: () => true, perKind: 5, floor: 0 };
  const lexicalOf = (e: DiscoveryEngine) =>
    e.search('employment', opts).find((h) => h.doc.id === 'tool:/t#screen')?.lexical ?? 0;
  t.equal(lexicalOf(plain), 0, 'without expansion, `employment` shares no word with the doc');
  t.ok(lexicalOf(expanded) > 0, 'with it, `employment` (related to hiring) reaches the doc lexically');
  t.notOk(
    expanded.search('employment', opts).some((h) => h.doc.id === 'tool:/t#bake' && h.lexical > 0),
    'an unrelated doc gains nothing',
  );
});
