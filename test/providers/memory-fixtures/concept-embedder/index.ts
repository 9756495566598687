import type { LlmProvider } from '../../../../core/primitives/llm.ts';
import type { ProviderFactory } from '../../../../core/provider.ts';

/**
 * Deterministic embeddings for tests: one axis per concept, words of the same
 * concept share it. "automobile" and "car" are close; "car" and "cat" are not,
 * which no lexical ranking can know. Option `fail: true` makes embed() throw
 * (an embeddings backend that is down); `calls` counts texts embedded.
 */
const CONCEPTS = [
  ['car', 'automobile', 'vehicle', 'sedan', 'motor'],
  ['cat', 'feline', 'kitten', 'tabby'],
  ['doctor', 'physician', 'medic', 'clinician'],
  ['money', 'cash', 'funds', 'currency'],
  ['ocean', 'sea', 'marine', 'tide'],
  ['happy', 'glad', 'joyful', 'cheerful'],
];

export function conceptVector(text: string): number[] {
  const v = new Array(CONCEPTS.length + 1).fill(0);
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const i = CONCEPTS.findIndex((c) => c.includes(w));
    v[i < 0 ? CONCEPTS.length : i] += i < 0 ? 0.1 : 1;
  }
  return v;
}

export const stats = { calls: 0 };

const conceptEmbedder: ProviderFactory<LlmProvider> = {
  type: 'concept_embedder',
  kind: 'llm',
  create: (name, options) => ({
    name,
    type: 'concept_embedder',
    kind: 'llm',
    capabilities: { streaming: false, tools: false, models: true, embeddings: options.embeddings !== false },
    complete: async () => {
      throw Object.assign(new Error('this test provider only embeds'), { statusCode: 400 });
    },
    // A generator that ends before its first value: streaming is refused like complete().
    stream: async function* () {
      yield* [];
      throw new Error('this test provider only embeds');
    },
    models: async () => ['concepts-1'],
    async embed(texts: string[]) {
      if (options.fail) throw new Error('connection refused (test)');
      stats.calls += texts.length;
      return texts.map(conceptVector);
    },
    healthcheck: async () => 'ok',
    close: async () => {},
  }),
};

export const providers: ProviderFactory[] = [conceptEmbedder as ProviderFactory];
