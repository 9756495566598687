import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

const JsonObject = Type.Record(Type.String(), Type.Unknown());
const Name = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.-]+$' });

/** OAuth2 token for a credential provider, obtained with a workload token (user federation or machine-to-machine). */
export const TokenRequest = Type.Object({
  credential_provider: Name,
  /** Required for M2M and USER_FEDERATION; TOKEN_EXCHANGE trades the caller's own token instead. */
  workload_token: Type.Optional(Type.String({ minLength: 1 })),
  scopes: Type.Array(Type.String(), { default: [] }),
  auth_flow: Type.Union([Type.Literal('M2M'), Type.Literal('USER_FEDERATION'), Type.Literal('TOKEN_EXCHANGE')], {
    default: 'M2M',
  }),
  callback_url: Type.Optional(Type.String({ format: 'uri' })),
  force_authentication: Type.Boolean({ default: false }),
  /** The reference client's name for force_authentication. */
  force_auth: Type.Optional(Type.Boolean()),
  /** USER_FEDERATION: extra query parameters for the authorization URL (e.g. prompt, login_hint); never the protocol's own. */
  custom_parameters: Type.Optional(Type.Record(Type.String({ maxLength: 128 }), Type.String({ maxLength: 2048 }))),
  /** TOKEN_EXCHANGE (RFC 8693): the token to exchange; the caller's bearer token when omitted. */
  subject_token: Type.Optional(Type.String({ minLength: 1 })),
  /** TOKEN_EXCHANGE: the audience (resource indicator) the new token is for. */
  audience: Type.Optional(Type.String({ minLength: 1 })),
});
export type TokenRequest = Static<typeof TokenRequest>;

/** Either a token, or (user federation) the URL the user must visit first. */
export const TokenResult = Type.Object({
  access_token: Type.Union([Type.String(), Type.Null()]),
  token_type: Type.String(),
  expires_in: Type.Union([Type.Integer(), Type.Null()]),
  authorization_url: Type.Union([Type.String(), Type.Null()]),
  /** USER_FEDERATION: names the pending authorization; POST /auth/complete takes it back (the reference's field). */
  session_uri: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type TokenResult = Static<typeof TokenResult>;

export const ApiKeyRequest = Type.Object({ credential_provider: Name, workload_token: Type.String({ minLength: 1 }) });
export type ApiKeyRequest = Static<typeof ApiKeyRequest>;
export const ApiKeyResult = Type.Object({ credential_provider: Type.String(), api_key: Type.String() });
export type ApiKeyResult = Static<typeof ApiKeyResult>;

export const WorkloadTokenRequest = Type.Object({
  workload_name: Name,
  /** A user's token to bind the workload token to, or a user id when the caller vouches for the user. */
  user_token: Type.Optional(Type.String({ minLength: 1 })),
  user_id: Type.Optional(Type.String({ minLength: 1 })),
});
export type WorkloadTokenRequest = Static<typeof WorkloadTokenRequest>;
export const WorkloadTokenResult = Type.Object({ workload_name: Type.String(), workload_token: Type.String() });
export type WorkloadTokenResult = Static<typeof WorkloadTokenResult>;

/**
 * Confirms that the user finished the authorization a USER_FEDERATION token
 * request sent them to (3-legged OAuth), so the next token request for that
 * session gets the token. `session_uri` names the pending authorization.
 */
export const CompleteAuthRequest = Type.Object({
  /** The session_uri of the token answer, its state, or the whole callback URL the issuer redirected to (code and state in its query). */
  session_uri: Type.String({ minLength: 1, maxLength: 8192 }),
  /** The authorization code from the callback, when session_uri does not carry it. */
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  user_token: Type.Optional(Type.String({ minLength: 1 })),
  user_id: Type.Optional(Type.String({ minLength: 1 })),
});
export type CompleteAuthRequest = Static<typeof CompleteAuthRequest>;

export const CredentialProviderType = Type.Union([Type.Literal('oauth2'), Type.Literal('api_key')]);

/**
 * A credential provider as returned: `config` is echoed without secret values
 * (client secrets, API keys), which are write-only.
 */
export const CredentialProvider = Type.Object({
  name: Type.String(),
  provider_type: CredentialProviderType,
  config: JsonObject,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type CredentialProvider = Static<typeof CredentialProvider>;

export const CreateCredentialProviderRequest = Type.Object({
  name: Name,
  provider_type: CredentialProviderType,
  config: Type.Optional(JsonObject),
});
export type CreateCredentialProviderRequest = Static<typeof CreateCredentialProviderRequest>;
export const UpdateCredentialProviderRequest = Type.Object({ config: JsonObject });
export type UpdateCredentialProviderRequest = Static<typeof UpdateCredentialProviderRequest>;

export const WorkloadIdentity = Type.Object({
  name: Type.String(),
  allowed_return_urls: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type WorkloadIdentity = Static<typeof WorkloadIdentity>;

export const CreateWorkloadIdentityRequest = Type.Object({
  name: Name,
  allowed_return_urls: Type.Optional(Type.Array(Type.String({ format: 'uri' }))),
});
export type CreateWorkloadIdentityRequest = Static<typeof CreateWorkloadIdentityRequest>;
export const UpdateWorkloadIdentityRequest = Type.Object({
  allowed_return_urls: Type.Array(Type.String({ format: 'uri' })),
});
export type UpdateWorkloadIdentityRequest = Static<typeof UpdateWorkloadIdentityRequest>;

/** Config keys whose values are secrets (client_secret, api_key, access_token, ...; not token_url): stored, used, never returned. */
export const SECRET_CONFIG_KEYS = /secret|password|passphrase|api_?key|private_?key|(^|_)token$/i;

export interface IdentityCapabilities {
  /** OAuth2 token issuance (POST /token). */
  tokens: boolean;
  /** API key retrieval (POST /api-key). */
  api_keys: boolean;
  /** Workload token issuance (POST /workload-token). */
  workload_tokens: boolean;
  credential_providers: boolean;
  workload_identities: boolean;
  [k: string]: boolean | string | readonly string[];
}

/** Who asks: the platform principal, and the bearer token they authenticated with (for token exchange). */
export interface IdentityCaller {
  principal?: { id: string; is_admin: boolean };
  bearer?: string;
}

/** A JSON Web Key Set of public keys (what /.well-known/jwks.json publishes). */
export interface PublicJwks {
  keys: Array<Record<string, unknown>>;
}

/** The identity primitive. Create methods return undefined when the name is taken. */
export interface IdentityProvider extends ProviderBase {
  readonly kind: 'identity';
  readonly capabilities: IdentityCapabilities;
  /** Only providers that run a 3-legged user authorization implement it; the route answers 501 otherwise. */
  completeAuth?(req: CompleteAuthRequest, caller?: { principal?: { id: string; is_admin: boolean } }): Promise<void>;
  getToken(req: TokenRequest, caller?: IdentityCaller): Promise<TokenResult>;
  getApiKey(req: ApiKeyRequest, caller?: IdentityCaller): Promise<ApiKeyResult>;
  getWorkloadToken(req: WorkloadTokenRequest, caller?: IdentityCaller): Promise<WorkloadTokenResult>;
  /** Public keys that verify the workload tokens this provider signs (absent when it signs none). */
  publicJwks?(): Promise<PublicJwks>;

  createCredentialProvider(req: CreateCredentialProviderRequest): Promise<CredentialProvider | undefined>;
  listCredentialProviders(): Promise<CredentialProvider[]>;
  getCredentialProvider(name: string): Promise<CredentialProvider | undefined>;
  updateCredentialProvider(name: string, req: UpdateCredentialProviderRequest): Promise<CredentialProvider | undefined>;
  deleteCredentialProvider(name: string): Promise<boolean>;

  createWorkloadIdentity(req: CreateWorkloadIdentityRequest): Promise<WorkloadIdentity | undefined>;
  listWorkloadIdentities(): Promise<WorkloadIdentity[]>;
  getWorkloadIdentity(name: string): Promise<WorkloadIdentity | undefined>;
  updateWorkloadIdentity(name: string, req: UpdateWorkloadIdentityRequest): Promise<WorkloadIdentity | undefined>;
  deleteWorkloadIdentity(name: string): Promise<boolean>;
}

/** `config` with every secret-named value (at any depth) replaced, for responses. */
export function redactSecrets(config: Record<string, unknown>): Record<string, unknown> {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [
          k,
          SECRET_CONFIG_KEYS.test(k) && (typeof x === 'string' || typeof x === 'number') ? '********' : walk(x),
        ]),
      );
    }
    return v;
  };
  return walk(config) as Record<string, unknown>;
}
