import { type Static, Type } from '@sinclair/typebox';
import { validateSection } from '../../../core/config.ts';

/** `registry.discovery` in the config file. */
export const DiscoveryConfigSchema = Type.Object(
  {
    /**
     * An OpenAI-compatible embeddings endpoint (POST {url}/embeddings). `join`
     * adds its cosine to the built-in word vectors' (each counts half);
     * `replace` uses it alone. Without it, the built-in word vectors serve.
     */
    embeddings: Type.Optional(
      Type.Object(
        {
          url: Type.String({ pattern: '^https?://' }),
          model: Type.String({ minLength: 1 }),
          dimensions: Type.Integer({ minimum: 1, maximum: 8192 }),
          /** Use `${ENV_VAR}` here rather than the key itself; never logged, never returned. */
          api_key: Type.Optional(Type.String()),
          mode: Type.Union([Type.Literal('join'), Type.Literal('replace')], { default: 'join' }),
          timeout_ms: Type.Integer({ minimum: 100, default: 5000 }),
          batch_size: Type.Integer({ minimum: 1, maximum: 2048, default: 64 }),
        },
        { additionalProperties: false },
      ),
    ),
    /** Results under this relevance are not returned (see docs/discovery.md). */
    confidence_floor: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    /** Off: lexical ranking only (no word vectors are read). */
    semantic: Type.Boolean({ default: true }),
  },
  { additionalProperties: false },
);
export type DiscoveryConfig = Static<typeof DiscoveryConfigSchema>;
export type EmbeddingsConfig = NonNullable<DiscoveryConfig['embeddings']>;

export function discoveryConfig(registrySection: unknown): DiscoveryConfig {
  const section = (registrySection as { discovery?: unknown } | undefined)?.discovery;
  return validateSection(DiscoveryConfigSchema, section ?? {}, 'registry.discovery');
}
