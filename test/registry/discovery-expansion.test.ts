import t from 'tap';
import type { Doc } from '../../plugins/registry/discovery/documents.ts';
import { SifEmbedder } from '../../plugins/registry/discovery/embedder.ts';
import { DiscoveryEngine } from '../../plugins/registry/discovery/engine.ts';
import { attachWordKnowledge } from '../../plugins/registry/discovery/meaning.ts';
import { poolScan } from '../../plugins/registry/discovery/pool-scan.ts';
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

t.test('the SIMD pool scan sums exactly as the JavaScript loop does (same related words, bit for bit)', async (t) => {
  const wv = wordVectors();
  if (!wv) throw new Error(`word vectors missing: ${WORD_VECTORS_BUILD_COMMAND}`);
  const { data, dims } = wv;
  // A pool of 2,000 rows and 300 query rows spread over the table, against the loop meaning.ts falls back to.
  const n = 2_000;
  const pool = data.slice(300 * dims, (300 + n) * dims);
  const scan = poolScan(pool, n, dims);
  t.ok(scan, 'WebAssembly SIMD is available on this Node: the expansion takes the fast path');
  let compared = 0;
  let differ = 0;
  for (let j = 0; j < 300; j++) {
    const r = 300 + ((j * 331) % (wv.rows.size - 300));
    const q = data.subarray(r * dims, (r + 1) * dims);
    const dots = scan!.dots(q);
    for (let i = 0; i < n; i++) {
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let k = 0; k < dims; k += 4) {
        a0 += q[k]! * pool[i * dims + k]!;
        a1 += q[k + 1]! * pool[i * dims + k + 1]!;
        a2 += q[k + 2]! * pool[i * dims + k + 2]!;
        a3 += q[k + 3]! * pool[i * dims + k + 3]!;
      }
      compared++;
      if (dots[i] !== a0 + a1 + a2 + a3) differ++;
    }
  }
  t.equal(compared, 600_000);
  t.equal(differ, 0, 'every dot product equal to the last bit');
  t.equal(poolScan(pool, n, dims - 2), undefined, 'a width that is not a multiple of four keeps the JavaScript loop');
});
