import { fileURLToPath } from 'node:url';
import t from 'tap';
import pino from 'pino';
import type { LlmProvider } from '../../core/primitives/llm.ts';
import type { MemoryProvider } from '../../core/primitives/memory.ts';
import { openStore } from '../../core/store.ts';
import { keyvMemory } from '../../providers/keyv/memory-provider.ts';
import { memoryConformance } from '../conformance/memory.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { providers as embedderFactories } from './memory-fixtures/concept-embedder/index.ts';

const EMBEDDER = fileURLToPath(new URL('./memory-fixtures/concept-embedder', import.meta.url));

const config = {
  provider_packages: [EMBEDDER],
  providers: {
    llm: {
      default: 'concepts',
      instances: {
        concepts: { type: 'concept_embedder' },
        broken: { type: 'concept_embedder', options: { fail: true } },
        chat_only: { type: 'concept_embedder', options: { embeddings: false } },
      },
    },
    memory: {
      default: 'smart',
      instances: {
        smart: { type: 'keyv', options: { embeddings: 'concepts' } },
        plain: { type: 'keyv' },
        down: { type: 'keyv', options: { embeddings: 'broken' } },
        wrong: { type: 'keyv', options: { embeddings: 'chat_only' } },
      },
    },
  },
};

const DOCS = [
  { key: 'garage', content: 'the sedan needs new brakes and tyres before the trip' },
  { key: 'pets', content: 'our tabby sleeps all day on the sofa', metadata: { home: true } },
  { key: 'clinic', content: 'the physician sees patients every monday' },
  { key: 'bank', content: 'deposit the cash at the branch before noon', metadata: { home: false } },
  { key: 'beach', content: 'we walked along the shore at low tide' },
];

t.test('semantic ranking from an embeddings-capable llm, fused with BM25', async (t) => {
  const app = await makeApp(t, config);
  const search = async (provider: string, query: string, extra: Record<string, unknown> = {}) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/memory/kb/search',
      headers: { 'x-provider-memory': provider },
      payload: { query, top_k: 2, ...extra },
    });
    t.equal(res.statusCode, 200, `${provider}: ${query}`);
    return (res.json().results as Array<{ record: { key: string }; score: number }>).map((h) => h.record.key);
  };
  for (const p of ['smart', 'plain']) {
    for (const d of DOCS)
      t.equal(
        (
          await app.inject({
            method: 'POST',
            url: '/api/v1/memory/kb',
            headers: { 'x-provider-memory': p },
            payload: d,
          })
        ).statusCode,
        201,
      );
  }
  t.equal(app.sb.providers.get<MemoryProvider>('memory', 'smart')?.capabilities.search, 'hybrid');
  t.equal(app.sb.providers.get<MemoryProvider>('memory', 'plain')?.capabilities.search, 'lexical');

  // No word in common with the record: only meaning can find it.
  t.same(await search('plain', 'automobile'), [], 'lexical alone finds nothing for a synonym');
  t.equal((await search('smart', 'automobile'))[0], 'garage', 'the embedding finds the sedan');
  t.equal((await search('smart', 'feline'))[0], 'pets');
  t.equal((await search('smart', 'money'))[0], 'bank');

  // One term for each ranking: fusion keeps the lexical hit and the semantic hit.
  t.same(await search('plain', 'brakes medic'), ['garage'], 'lexical sees only the brakes');
  t.same(
    (await search('smart', 'brakes medic')).sort(),
    ['clinic', 'garage'],
    'fusion adds the physician for "medic", by meaning',
  );

  t.same(
    await search('smart', 'kitten cash', { filters: { home: true } }),
    ['pets'],
    'metadata filters apply to both rankings',
  );

  t.equal(
    (await app.inject({ method: 'DELETE', url: '/api/v1/memory/kb/garage', headers: { 'x-provider-memory': 'smart' } }))
      .statusCode,
    204,
  );
  t.notOk((await search('smart', 'automobile')).includes('garage'), 'a deleted record leaves the vector ranking too');
});

t.test('embeddings that fail or are misconfigured are 503 naming the llm provider', async (t) => {
  const app = await makeApp(t, config);
  const store = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/kb',
    headers: { 'x-provider-memory': 'down' },
    payload: DOCS[0],
  });
  t.equal(store.statusCode, 503);
  t.match(store.json(), { code: 'SB_ERR_MEMORY_EMBEDDINGS_DOWN', detail: /'broken'/ });
  const search = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/kb/search',
    headers: { 'x-provider-memory': 'down' },
    payload: { query: 'car' },
  });
  t.equal(search.statusCode, 503);
  const wrong = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/kb',
    headers: { 'x-provider-memory': 'wrong' },
    payload: DOCS[0],
  });
  t.equal(wrong.statusCode, 503);
  t.match(wrong.json().detail, /'chat_only'.*no embeddings capability/);
});

t.test('keyv with embeddings (hybrid search) passes the memory conformance suite', async (t) => {
  const llm = (await embedderFactories[0].create('concepts', {}, undefined as never)) as LlmProvider;
  await memoryConformance(t, {
    make: async () => {
      const store = await openStore({ backend: 'memory' });
      const ctx = {
        store,
        logger: pino({ level: 'silent' }),
        dataDir: tempDir(),
        lookup: (kind: string) => (kind === 'llm' ? llm : undefined),
      };
      return (await keyvMemory.create('hybrid', { embeddings: 'concepts' }, ctx)) as MemoryProvider;
    },
  });
});
