import { resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { validateSection } from '../../../core/config.ts';

export const IDP_KINDS = ['keycloak', 'entra', 'okta', 'cognito', 'auth0', 'oidc'] as const;
export type IdpKind = (typeof IDP_KINDS)[number];

const Idp = Type.Object(
  {
    provider: Type.Union(IDP_KINDS.map((k) => Type.Literal(k))),
    /** keycloak: base URL (issuer `{url}/realms/{realm}`). */
    url: Type.Optional(Type.String()),
    realm: Type.Optional(Type.String()),
    /** entra */
    tenant_id: Type.Optional(Type.String()),
    /** okta / auth0: the domain, e.g. dev-1.okta.com */
    domain: Type.Optional(Type.String()),
    /** okta: authorization server id (default `default`). */
    auth_server_id: Type.Optional(Type.String()),
    /** cognito */
    region: Type.Optional(Type.String()),
    user_pool_id: Type.Optional(Type.String()),
    /** oidc: the issuer; any provider: overrides the derived issuer. */
    issuer: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    client_secret: Type.Optional(Type.String()),
    /** Required `aud` of IdP tokens when set. */
    audience: Type.Optional(Type.String()),
    jwks_uri: Type.Optional(Type.String()),
    token_endpoint: Type.Optional(Type.String()),
    authorization_endpoint: Type.Optional(Type.String()),
    display_name: Type.Optional(Type.String()),
    /** Scopes asked for in the M2M client-credentials grant. */
    m2m_scope: Type.Optional(Type.String()),
    /** Where the IdP sends the browser back; default `{this origin}/api/auth/auth/callback`. */
    redirect_uri: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type IdpSettings = Static<typeof Idp>;

/** Failed local logins (form and HTTP Basic) before a 429 lockout; login-lockout.ts says how they count. */
const LoginLockoutSection = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    max_attempts: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
    max_attempts_per_ip: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
    window_s: Type.Integer({ minimum: 1, maximum: 86_400, default: 900 }),
    /** Loopback by default: the shipped nginx runs on the replicas' host. */
    trusted_proxies: Type.Array(Type.String({ minLength: 1 }), { default: ['127.0.0.1', '::1'] }),
  },
  { additionalProperties: false, default: {} },
);

/** Only the keys this plugin owns; the catalog validates its own keys of `registry`. */
const AuthSection = Type.Object(
  {
    admin_user: Type.Optional(Type.String({ minLength: 1 })),
    admin_password: Type.Optional(Type.String({ minLength: 1 })),
    secret_key: Type.Optional(Type.String({ minLength: 16 })),
    session_hours: Type.Number({ minimum: 0.01, maximum: 168, default: 8 }),
    token_mint_limit_per_hour: Type.Integer({ minimum: 1, default: 100 }),
    scopes_dir: Type.Optional(Type.String()),
    /** Cookies get `Secure` when true (behind TLS). */
    secure_cookies: Type.Boolean({ default: false }),
    idp: Type.Optional(Idp),
    login_lockout: LoginLockoutSection,
  },
  { additionalProperties: true },
);
export type AuthSettings = Static<typeof AuthSection> & { scopesDir: string };

const ENV_IDP: Record<string, keyof IdpSettings> = {
  IDP_URL: 'url',
  KEYCLOAK_URL: 'url',
  KEYCLOAK_REALM: 'realm',
  ENTRA_TENANT_ID: 'tenant_id',
  OKTA_DOMAIN: 'domain',
  AUTH0_DOMAIN: 'domain',
  AWS_REGION: 'region',
  COGNITO_USER_POOL_ID: 'user_pool_id',
  OIDC_ISSUER: 'issuer',
  IDP_CLIENT_ID: 'client_id',
  IDP_CLIENT_SECRET: 'client_secret',
  IDP_AUDIENCE: 'audience',
};

/** `registry.*` auth keys plus AUTH_PROVIDER and the provider's env variables. */
export function authSettings(registry: unknown, env: NodeJS.ProcessEnv, configDir: string): AuthSettings {
  const raw = { ...((registry as Record<string, unknown>) ?? {}) };
  if (env.AUTH_PROVIDER) {
    const idp: Record<string, unknown> = {
      ...((raw.idp as Record<string, unknown>) ?? {}),
      provider: env.AUTH_PROVIDER,
    };
    for (const [name, key] of Object.entries(ENV_IDP)) if (env[name] && idp[key] === undefined) idp[key] = env[name];
    raw.idp = idp;
  }
  const s = validateSection(AuthSection, raw, 'registry');
  const scopesDir = s.scopes_dir ? resolve(configDir, s.scopes_dir) : resolve(import.meta.dirname, '../../../scopes');
  return { ...s, scopesDir };
}
