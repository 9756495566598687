import { Type, type Static } from '@sinclair/typebox';
import { validateSection } from '../../../core/config.ts';

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
  },
  { additionalProperties: false },
);
export type CredentialsSettings = Static<typeof CredentialsSettings>;

export function credentialsSettings(platform: Record<string, unknown> | undefined): CredentialsSettings {
  return validateSection(CredentialsSettings, platform?.credentials, 'platform.credentials');
}
