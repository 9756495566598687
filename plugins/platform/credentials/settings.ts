import { Type, type Static } from '@sinclair/typebox';
import { validateSection } from '../../../core/config.ts';

/**
 * `platform.credentials.oidc`: read the caller's credential attributes from
 * the identity provider's userinfo endpoint (oidc-source.ts). The issuer is
 * the jwt auth backend's unless given here.
 */
export const OidcSourceSettings = Type.Object(
  {
    issuer: Type.Optional(Type.String({ pattern: '^https?://' })),
    /** Skips discovery when set. */
    userinfo_url: Type.Optional(Type.String({ pattern: '^https?://' })),
    /** Attributes named `<prefix><service>.<key>` are credentials; others are ignored. */
    prefix: Type.String({ minLength: 1, default: 'apg.' }),
    cache_ttl_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 300 }),
    cache_max_entries: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
    timeout_ms: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000 }),
  },
  { additionalProperties: false },
);
export type OidcSourceSettings = Static<typeof OidcSourceSettings>;

/** The `platform.credentials` config section. */
export const CredentialsSettings = Type.Object(
  {
    /** Whether server-side credentials are used: never, only when the caller has none, or always (spec 5.7). */
    server_credentials: Type.Union([Type.Literal('never'), Type.Literal('fallback'), Type.Literal('always')], {
      default: 'fallback',
    }),
    /** Credential type names a deployment expects callers to have (shown by /credentials/status). */
    required_credentials: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    /** Set when cloud credentials are obtained through the identity provider (web-identity role). */
    cloud_role_arn: Type.Optional(Type.String({ minLength: 1 })),
    /** The `oidc` source: the user's attributes from the identity provider's userinfo (off unless set). */
    oidc: Type.Optional(OidcSourceSettings),
  },
  { additionalProperties: false },
);
export type CredentialsSettings = Static<typeof CredentialsSettings>;

export function credentialsSettings(platform: Record<string, unknown> | undefined): CredentialsSettings {
  return validateSection(CredentialsSettings, platform?.credentials, 'platform.credentials');
}
