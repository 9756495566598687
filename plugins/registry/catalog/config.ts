import { Type, type Static } from '@sinclair/typebox';
import { validateSection } from '../../../core/config.ts';

/** The catalog's keys of the free-form `registry` config section (other keys belong to registry auth and health). */
export const CatalogConfigSchema = Type.Object(
  {
    /** gateway: clients reach servers through this service, so backend URLs are hidden from non-admins. */
    deployment_mode: Type.Union(
      [Type.Literal('gateway'), Type.Literal('registry-only'), Type.Literal('registry_only')],
      { default: 'gateway' },
    ),
    well_known_ttl_seconds: Type.Integer({ minimum: 0, default: 300 }),
    /** SKILL.md may be fetched from private, loopback and link-local addresses (never from cloud metadata unless this is true). */
    allow_private_skill_urls: Type.Boolean({ default: false }),
    skill_fetch_timeout_ms: Type.Integer({ minimum: 100, default: 10000 }),
    /** Reverse-DNS prefix of /v0 server names: `<namespace>/<path>`. */
    v0_namespace: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9.-]+$', default: 'io.switchboard' }),
  },
  { additionalProperties: true },
);
export type CatalogConfig = Static<typeof CatalogConfigSchema> & { registryOnly: boolean };

export function catalogConfig(section: unknown): CatalogConfig {
  const c = validateSection(CatalogConfigSchema, section ?? {}, 'registry');
  return { ...c, registryOnly: c.deployment_mode !== 'gateway' };
}
