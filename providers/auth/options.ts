import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** Validate provider options; the message names the first failing option so the startup error is actionable. */
export function parseOptions<T extends TSchema>(
  schema: T,
  options: Record<string, unknown>,
  provider: string,
): Static<T> {
  const value = Value.Default(schema, structuredClone(options));
  const first = Value.Errors(schema, value).First();
  if (first) {
    const key = first.path.split('/').filter(Boolean).join('.') || '(root)';
    throw new Error(`${provider} option '${key}': ${first.message}`);
  }
  return value as Static<T>;
}

export const ApiKeyEntry = Type.Object(
  {
    key: Type.String({
      minLength: 8,
      description: 'The secret; use ${ENV} expansion in the config file rather than a literal',
    }),
    principal_id: Type.String({ minLength: 1 }),
    groups: Type.Array(Type.String(), { default: [] }),
    scopes: Type.Array(Type.String(), { default: [] }),
    admin: Type.Boolean({ default: false }),
    type: Type.Union([Type.Literal('user'), Type.Literal('service')], { default: 'user' }),
  },
  { additionalProperties: false },
);

export const ApiKeyOptions = Type.Object(
  { keys: Type.Array(ApiKeyEntry, { minItems: 1 }) },
  { additionalProperties: false },
);

export const JwtOptions = Type.Object(
  {
    issuer: Type.String({
      minLength: 1,
      description: 'Expected `iss`; also where /.well-known/openid-configuration is read',
    }),
    audience: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })]),
    /** Skips discovery when given. */
    jwks_uri: Type.Optional(Type.String({ minLength: 1 })),
    principal_claim: Type.String({ default: 'sub' }),
    /** Claim with the caller's groups (array, or a space/comma-separated string). */
    groups_claim: Type.String({ default: 'groups' }),
    /** Claim with the granted scopes (`scope` is space-separated per RFC 8693; `scp` arrays work too). */
    scopes_claim: Type.String({ default: 'scope' }),
    /** Members of any of these groups, or holders of any of these scopes, are admins. */
    admin_groups: Type.Array(Type.String(), { default: [] }),
    admin_scopes: Type.Array(Type.String(), { default: [] }),
    algorithms: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
    clock_tolerance_seconds: Type.Integer({ minimum: 0, maximum: 300, default: 0 }),
    /** How long discovery and JWKS fetches may take before the backend counts as down. */
    timeout_ms: Type.Integer({ minimum: 100, maximum: 60000, default: 5000 }),
  },
  { additionalProperties: false },
);
export type JwtOptions = Static<typeof JwtOptions>;
