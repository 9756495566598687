import t from 'tap';
import type { ServerRecord } from '../../plugins/registry/catalog/records.ts';
import { serverDocs } from '../../plugins/registry/discovery/documents.ts';
import type { DiscoveryEngine } from '../../plugins/registry/discovery/engine.ts';
import { queries } from './discovery-fixture.ts';
import { allKinds, fixtureEngine } from './discovery-offline.ts';

/**
 * The query's cosine scan over every doc vector runs as WebAssembly SIMD (pool-scan.ts) over a copy of the
 * vector table. It must rank exactly as the JavaScript loop does, and the copy must follow writes: a doc added,
 * replaced or removed after a search is seen (or not) by the next one.
 */
const run = (e: DiscoveryEngine, q: string) =>
  e
    .search(q, { kinds: allKinds, allow: () => true, perKind: 10 })
    .map((h) => `${h.doc.id}:${h.relevance_score}:${h.semantic}`)
    .join(' ');
const useSimd = (e: DiscoveryEngine, on: boolean) => {
  (e as unknown as { simd: boolean }).simd = on;
};

const simd = fixtureEngine();
const plain = fixtureEngine();
useSimd(plain, false);
t.ok(run(simd, 'weather forecast') !== '', 'the fixture answers (word vectors built by the test setup)');
t.ok((simd as unknown as { scanner?: unknown }).scanner !== undefined, 'the SIMD scanner is in use on this machine');

t.test('every development query ranks and scores exactly as the JavaScript scan does', async (t) => {
  for (const q of queries) t.equal(run(simd, q.query), run(plain, q.query), q.query);
});

t.test('the scanner follows writes between searches', async (t) => {
  const q = 'catalogue of rare tropical orchids for greenhouse collectors';
  const before = run(simd, q);
  const doc = (desc: string) =>
    serverDocs({
      path: '/orchids',
      server_name: 'orchid-house',
      description: desc,
      tags: [],
      tool_list: [],
      metadata: {},
    } as unknown as ServerRecord);
  for (const e of [simd, plain]) e.replaceGroup('server:/orchids', doc('A catalogue of rare tropical orchids.'));
  const added = run(simd, q);
  t.equal(added, run(plain, q), 'after an add: same as the JavaScript scan');
  t.match(added, /server:\/orchids/, 'and the new doc is found');
  for (const e of [simd, plain]) e.replaceGroup('server:/orchids', doc('Weather forecasts for sailors.'));
  t.equal(run(simd, q), run(plain, q), 'after a replace: same as the JavaScript scan');
  for (const e of [simd, plain]) e.replaceGroup('server:/orchids', []);
  t.equal(run(simd, q), before, 'after a removal: as before the add');
});
