import { createRemoteJWKSet, jwtVerify } from 'jose';
import { badRequest, forbidden, notFound } from '../../core/errors.ts';
import { createFernet } from '../../core/crypto/fernet.ts';
import { loadSecrets } from '../../core/secrets.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import type {
  CredentialProvider,
  IdentityCaller,
  IdentityCapabilities,
  IdentityProvider,
  TokenRequest,
  TokenResult,
} from '../../core/primitives/identity.ts';
import { Issuer } from './issuer.ts';
import { IdentityRecords } from './records.ts';
import { UserFederation } from './user-federation.ts';
import { WorkloadKeys } from './workload-keys.ts';

const CAPABILITIES: IdentityCapabilities = {
  tokens: true,
  api_keys: true,
  workload_tokens: true,
  credential_providers: true,
  workload_identities: true,
  token_exchange: true,
};
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
// What an access token may look like on the wire (RFC 6750 b64token): anything else is malformed before any issuer sees it.
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

interface Options {
  issuer: string;
  workload_issuer: string;
  workload_audience: string;
  workload_token_ttl_seconds: number;
}

function readOptions(o: Record<string, unknown>): Options {
  if (typeof o.issuer !== 'string' || !/^https?:\/\//.test(o.issuer))
    throw new Error("option 'issuer' is required: the OIDC issuer URL (its /.well-known/openid-configuration is read)");
  const ttl = o.workload_token_ttl_seconds ?? 300;
  if (typeof ttl !== 'number' || ttl < 1 || ttl > 3600)
    throw new Error("option 'workload_token_ttl_seconds' must be 1..3600");
  for (const k of ['workload_issuer', 'workload_audience'])
    if (o[k] !== undefined && typeof o[k] !== 'string') throw new Error(`option '${k}' must be a string`);
  return {
    issuer: o.issuer.replace(/\/+$/, ''),
    workload_issuer: (o.workload_issuer as string | undefined) ?? 'switchboard',
    workload_audience: (o.workload_audience as string | undefined) ?? 'switchboard-workloads',
    workload_token_ttl_seconds: ttl,
  };
}

const str = (cfg: Record<string, unknown>, k: string) =>
  typeof cfg[k] === 'string' && cfg[k] ? (cfg[k] as string) : undefined;

/**
 * Identity on a standard OIDC/OAuth2 issuer. Tokens for credential providers
 * come from the issuer (client_credentials; RFC 8693 token exchange of the
 * caller's token); workload tokens are JWTs Switchboard signs with its own
 * key (published at /.well-known/jwks.json); credential-provider secrets are
 * encrypted at rest with ENCRYPTION_KEY and used only here.
 */
export const oidcIdentity: ProviderFactory<IdentityProvider> = {
  type: 'oidc',
  kind: 'identity',
  description:
    'OIDC/OAuth2 issuer: client_credentials, RFC 8693 token exchange, 3-legged user federation (authorization code + PKCE), stored API keys, signed workload tokens',
  // Configured with an issuer, it is the real engine: the default over noop.
  preferred: (options) => typeof options.issuer === 'string' && options.issuer.length > 0,
  create(name, options, ctx) {
    const opts = readOptions(options);
    const issuer = new Issuer(opts.issuer);
    const records = new IdentityRecords(
      ctx.store,
      name,
      createFernet(loadSecrets(ctx.dataDir, process.env).encryptionKey),
    );
    const keys = new WorkloadKeys(ctx.dataDir);
    const federation = new UserFederation(
      ctx.store,
      name,
      createFernet(loadSecrets(ctx.dataDir, process.env).encryptionKey),
      issuer,
    );
    let issuerKeys: ReturnType<typeof createRemoteJWKSet> | undefined;

    const credentialProvider = async (n: string, type: CredentialProvider['provider_type']) => {
      const cp = await records.providerForUse(n);
      if (!cp) throw notFound('SB_ERR_IDENTITY_PROVIDER_NOT_FOUND', `Credential provider '${n}' not found`);
      if (cp.provider_type !== type)
        throw badRequest(
          'SB_ERR_IDENTITY_PROVIDER_TYPE',
          `Credential provider '${n}' is of type ${cp.provider_type}; this operation needs an ${type} provider`,
        );
      return cp;
    };

    /** The workload a token was issued to; 403 for a forged, expired or foreign token, or a workload since deleted. */
    const workloadOf = async (token: string | undefined): Promise<{ sub: string; user_id?: string }> => {
      if (!token)
        throw badRequest(
          'SB_ERR_IDENTITY_WORKLOAD_TOKEN_MISSING',
          'workload_token is required: get one from POST /api/v1/identity/workload-token',
        );
      let claims: { sub: string; user_id?: unknown };
      try {
        claims = await keys.verify(token, opts.workload_issuer, opts.workload_audience);
      } catch (err) {
        throw forbidden(
          'SB_ERR_IDENTITY_WORKLOAD_TOKEN_INVALID',
          `The workload token is not valid here (${(err as Error).message}); get a new one from POST /api/v1/identity/workload-token`,
        );
      }
      if (!(await records.getWorkload(claims.sub)))
        throw forbidden(
          'SB_ERR_IDENTITY_WORKLOAD_TOKEN_INVALID',
          `The workload '${claims.sub}' of this token no longer exists`,
        );
      return { sub: claims.sub, ...(typeof claims.user_id === 'string' ? { user_id: claims.user_id } : {}) };
    };

    const client = (cp: CredentialProvider) => {
      const id = str(cp.config, 'client_id');
      const secret = str(cp.config, 'client_secret');
      if (!id || !secret)
        throw badRequest(
          'SB_ERR_IDENTITY_PROVIDER_INCOMPLETE',
          `Credential provider '${cp.name}' needs config.client_id and config.client_secret for the issuer`,
        );
      return { id, secret };
    };

    const answer = (t: { access_token: string; token_type?: string; expires_in?: number }): TokenResult => ({
      access_token: t.access_token,
      token_type: t.token_type ?? 'Bearer',
      expires_in: typeof t.expires_in === 'number' ? Math.floor(t.expires_in) : null,
      authorization_url: null,
    });

    const scopesOf = (req: TokenRequest, cp: CredentialProvider) => {
      const fromConfig = Array.isArray(cp.config.scopes)
        ? (cp.config.scopes as unknown[]).filter((s): s is string => typeof s === 'string')
        : [];
      return (req.scopes.length ? req.scopes : fromConfig).join(' ');
    };

    /** A token the user delegated earlier, or the authorization URL they must visit first (3-legged OAuth). */
    const userFederation = async (
      req: TokenRequest,
      cp: CredentialProvider,
      scope: string,
      caller: IdentityCaller | undefined,
    ): Promise<TokenResult> => {
      const w = await workloadOf(req.workload_token);
      const user = w.user_id ?? caller?.principal?.id;
      if (!user)
        throw badRequest(
          'SB_ERR_IDENTITY_USER_MISSING',
          'USER_FEDERATION needs a user: a workload token bound to one (user_id or user_token at POST /workload-token), or an authenticated caller',
        );
      const c = client(cp);
      if (!req.force_authentication && !req.force_auth) {
        const held = await federation.stored(cp, user, caller?.principal?.id ?? '', c);
        if (held) return held;
      }
      const redirect = req.callback_url ?? str(cp.config, 'redirect_uri');
      if (!redirect)
        throw badRequest(
          'SB_ERR_IDENTITY_CALLBACK_MISSING',
          `USER_FEDERATION needs callback_url (where the issuer sends the user back), or config.redirect_uri on credential provider '${cp.name}'`,
        );
      const allowed = (await records.getWorkload(w.sub))?.allowed_return_urls ?? [];
      if (allowed.length > 0 && !allowed.includes(redirect))
        throw badRequest(
          'SB_ERR_IDENTITY_CALLBACK_NOT_ALLOWED',
          `callback_url is not among the allowed_return_urls of workload identity '${w.sub}'`,
        );
      return federation.begin(
        cp,
        c,
        { principal_id: caller?.principal?.id ?? '', user_id: user },
        redirect,
        scope,
        req.custom_parameters,
      );
    };

    /** The user a user_token stands for, verified on the issuer's JWKS (400 when it does not verify). */
    const verifiedUser = async (token: string): Promise<string> => {
      const meta = await issuer.metadata();
      if (!meta.jwks_uri)
        throw badRequest(
          'SB_ERR_IDENTITY_USER_TOKEN_UNVERIFIABLE',
          `The issuer ${opts.issuer} publishes no jwks_uri, so user_token cannot be verified; pass user_id instead`,
        );
      issuerKeys ??= createRemoteJWKSet(new URL(meta.jwks_uri));
      try {
        const { payload } = await jwtVerify(token, issuerKeys, { issuer: meta.issuer });
        if (typeof payload.sub !== 'string') throw new Error('the token names no sub');
        return payload.sub;
      } catch (err) {
        throw badRequest(
          'SB_ERR_IDENTITY_USER_TOKEN_INVALID',
          `user_token does not verify on the issuer ${opts.issuer}: ${(err as Error).message}`,
        );
      }
    };

    const provider: IdentityProvider = {
      name,
      type: 'oidc',
      kind: 'identity',
      capabilities: CAPABILITIES,

      async getToken(req, caller) {
        const cp = await credentialProvider(req.credential_provider, 'oauth2');
        const scope = scopesOf(req, cp);
        if (req.auth_flow === 'USER_FEDERATION') return userFederation(req, cp, scope, caller);
        const form: Record<string, string> = {};
        if (scope) form.scope = scope;
        if (req.auth_flow === 'TOKEN_EXCHANGE') {
          const subject = req.subject_token ?? caller?.bearer;
          if (!subject)
            throw badRequest(
              'SB_ERR_IDENTITY_SUBJECT_TOKEN_MISSING',
              'TOKEN_EXCHANGE needs subject_token, or a bearer token on the request to exchange',
            );
          if (!B64TOKEN.test(subject))
            throw badRequest(
              'SB_ERR_IDENTITY_SUBJECT_TOKEN_MALFORMED',
              'subject_token is malformed: an access token is one string of letters, digits and -._~+/ (base64url-like)',
            );
          Object.assign(form, {
            grant_type: TOKEN_EXCHANGE,
            subject_token: subject,
            subject_token_type: ACCESS_TOKEN_TYPE,
            requested_token_type: ACCESS_TOKEN_TYPE,
          });
          const audience = req.audience ?? str(cp.config, 'audience');
          if (audience) form.audience = audience;
          return answer(await issuer.token(str(cp.config, 'token_url'), client(cp), form, true));
        }
        await workloadOf(req.workload_token);
        form.grant_type = 'client_credentials';
        const resource = str(cp.config, 'resource') ?? str(cp.config, 'audience');
        if (resource) form.resource = resource;
        return answer(await issuer.token(str(cp.config, 'token_url'), client(cp), form, false));
      },

      async getApiKey(req) {
        const cp = await credentialProvider(req.credential_provider, 'api_key');
        await workloadOf(req.workload_token);
        const key = str(cp.config, 'api_key');
        if (!key)
          throw badRequest(
            'SB_ERR_IDENTITY_PROVIDER_INCOMPLETE',
            `Credential provider '${cp.name}' holds no config.api_key`,
          );
        return { credential_provider: cp.name, api_key: key };
      },

      async getWorkloadToken(req) {
        const w = await records.getWorkload(req.workload_name);
        if (!w)
          throw notFound(
            'SB_ERR_IDENTITY_WORKLOAD_NOT_FOUND',
            `Workload identity '${req.workload_name}' not found; create it with POST /api/v1/identity/workload-identities`,
          );
        const extra: Record<string, unknown> = {};
        if (req.user_token) {
          // A user token binds the workload token to that user only once the issuer's signature checks out.
          extra.user_id = await verifiedUser(req.user_token);
        } else if (req.user_id) {
          extra.user_id = req.user_id;
        }
        const token = await keys.sign({
          sub: w.name,
          aud: opts.workload_audience,
          iss: opts.workload_issuer,
          ttlSeconds: opts.workload_token_ttl_seconds,
          extra,
        });
        return { workload_name: w.name, workload_token: token };
      },

      async completeAuth(req, caller) {
        const user = req.user_token ? await verifiedUser(req.user_token) : undefined;
        await federation.complete(req, caller?.principal?.id, user, async (n) => {
          const cp = await credentialProvider(n, 'oauth2');
          return { cp, client: client(cp) };
        });
      },

      async publicJwks() {
        return { keys: [{ ...(await keys.publicJwk()) }] };
      },

      createCredentialProvider: (req) => records.createProvider(req),
      listCredentialProviders: () => records.listProviders(),
      getCredentialProvider: (n) => records.getProvider(n),
      updateCredentialProvider: (n, req) => records.updateProvider(n, req.config),
      async deleteCredentialProvider(n) {
        const gone = await records.deleteProvider(n);
        if (gone) await federation.forget(n);
        return gone;
      },
      createWorkloadIdentity: (req) => records.createWorkload(req.name, [...(req.allowed_return_urls ?? [])]),
      listWorkloadIdentities: () => records.listWorkloads(),
      getWorkloadIdentity: (n) => records.getWorkload(n),
      updateWorkloadIdentity: (n, req) => records.updateWorkload(n, [...req.allowed_return_urls]),
      deleteWorkloadIdentity: (n) => records.deleteWorkload(n),

      async healthcheck() {
        try {
          await issuer.metadata();
          return 'ok';
        } catch {
          return 'down';
        }
      },
      async close() {},
    };
    return provider;
  },
};

export const providers = [oidcIdentity as ProviderFactory];
