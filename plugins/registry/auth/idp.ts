import { createRemoteJWKSet, jwtVerify, errors as joseErrors, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { StartupError, badGateway, unavailable } from '../../../core/errors.ts';
import type { IdentityProvider } from './identify.ts';
import { TokenRejected, type VerifiedIdentity } from './self-tokens.ts';
import type { IdpKind, IdpSettings } from './settings.ts';

export interface IdpEndpoints {
  issuer: string;
  jwks_uri?: string;
  token_endpoint?: string;
  authorization_endpoint?: string;
}

const DISPLAY: Record<IdpKind, string> = {
  keycloak: 'Keycloak',
  entra: 'Microsoft Entra ID',
  okta: 'Okta',
  cognito: 'Amazon Cognito',
  auth0: 'Auth0',
  oidc: 'OpenID Connect',
};

function need(s: IdpSettings, key: keyof IdpSettings): string {
  const v = s[key];
  if (typeof v !== 'string' || !v)
    throw new StartupError(
      'SB_ERR_CONFIG_INVALID',
      `Invalid config key 'registry.idp.${key}': required for AUTH_PROVIDER ${s.provider}`,
    );
  return v;
}

const trim = (u: string) => u.replace(/\/+$/, '');

/** The issuer and endpoints each provider publishes, by its documented URL forms. */
export function endpointsFor(s: IdpSettings): IdpEndpoints {
  let e: IdpEndpoints;
  switch (s.provider) {
    case 'keycloak': {
      const issuer = s.issuer ?? `${trim(need(s, 'url'))}/realms/${need(s, 'realm')}`;
      const oc = `${issuer}/protocol/openid-connect`;
      e = { issuer, jwks_uri: `${oc}/certs`, token_endpoint: `${oc}/token`, authorization_endpoint: `${oc}/auth` };
      break;
    }
    case 'entra': {
      const base = `https://login.microsoftonline.com/${s.tenant_id ?? need(s, 'tenant_id')}`;
      e = {
        issuer: s.issuer ?? `${base}/v2.0`,
        jwks_uri: `${base}/discovery/v2.0/keys`,
        token_endpoint: `${base}/oauth2/v2.0/token`,
        authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
      };
      break;
    }
    case 'okta': {
      const issuer = s.issuer ?? `https://${need(s, 'domain')}/oauth2/${s.auth_server_id ?? 'default'}`;
      e = {
        issuer,
        jwks_uri: `${issuer}/v1/keys`,
        token_endpoint: `${issuer}/v1/token`,
        authorization_endpoint: `${issuer}/v1/authorize`,
      };
      break;
    }
    case 'cognito': {
      const issuer = s.issuer ?? `https://cognito-idp.${need(s, 'region')}.amazonaws.com/${need(s, 'user_pool_id')}`;
      const hosted = s.domain ? `https://${s.domain}/oauth2` : undefined;
      e = {
        issuer,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        token_endpoint: hosted && `${hosted}/token`,
        authorization_endpoint: hosted && `${hosted}/authorize`,
      };
      break;
    }
    case 'auth0': {
      const domain = need(s, 'domain');
      e = {
        issuer: s.issuer ?? `https://${domain}/`,
        jwks_uri: `https://${domain}/.well-known/jwks.json`,
        token_endpoint: `https://${domain}/oauth/token`,
        authorization_endpoint: `https://${domain}/authorize`,
      };
      break;
    }
    case 'oidc':
      // Endpoints come from discovery unless configured.
      e = { issuer: need(s, 'issuer') };
      break;
  }
  return {
    issuer: e.issuer,
    jwks_uri: s.jwks_uri ?? e.jwks_uri,
    token_endpoint: s.token_endpoint ?? e.token_endpoint,
    authorization_endpoint: s.authorization_endpoint ?? e.authorization_endpoint,
  };
}

function stringList(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v === 'string') return v.split(' ').filter(Boolean);
  return [];
}

/** An identity provider: verifies its RS256 tokens and runs the client-credentials grant. */
export class Idp implements IdentityProvider {
  readonly kind: IdpKind;
  readonly displayName: string;
  private readonly configured: IdpEndpoints;
  private discovered?: Promise<IdpEndpoints>;
  private jwks?: JWTVerifyGetKey;

  constructor(private readonly s: IdpSettings) {
    this.kind = s.provider;
    this.displayName = s.display_name ?? DISPLAY[s.provider];
    this.configured = endpointsFor(s);
  }

  get issuer(): string {
    return this.configured.issuer;
  }

  get clientId(): string | undefined {
    return this.s.client_id;
  }

  /** Configured endpoints, completed from the issuer's discovery document when some are missing. */
  async endpoints(): Promise<IdpEndpoints> {
    const c = this.configured;
    if (c.jwks_uri && c.token_endpoint && c.authorization_endpoint) return c;
    this.discovered ??= this.discover().catch((err) => {
      this.discovered = undefined;
      throw err;
    });
    const d = await this.discovered;
    return {
      issuer: c.issuer,
      jwks_uri: c.jwks_uri ?? d.jwks_uri,
      token_endpoint: c.token_endpoint ?? d.token_endpoint,
      authorization_endpoint: c.authorization_endpoint ?? d.authorization_endpoint,
    };
  }

  private async discover(): Promise<IdpEndpoints> {
    const url = `${trim(this.configured.issuer)}/.well-known/openid-configuration`;
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    } catch (err) {
      throw unavailable(
        'SB_ERR_IDP_UNAVAILABLE',
        `Identity provider '${this.kind}' is unreachable at ${url}: ${(err as Error).message}`,
        err,
      );
    }
    if (!res.ok)
      throw badGateway(
        'SB_ERR_IDP_BAD_RESPONSE',
        `Identity provider '${this.kind}' answered ${res.status} for its discovery document ${url}`,
      );
    const doc = (await res.json()) as Record<string, string>;
    return {
      issuer: doc.issuer,
      jwks_uri: doc.jwks_uri,
      token_endpoint: doc.token_endpoint,
      authorization_endpoint: doc.authorization_endpoint,
    };
  }

  private async keys(): Promise<JWTVerifyGetKey> {
    if (this.jwks) return this.jwks;
    const { jwks_uri } = await this.endpoints();
    if (!jwks_uri)
      throw unavailable('SB_ERR_IDP_UNAVAILABLE', `Identity provider '${this.kind}' publishes no jwks_uri`);
    // jose caches the key set and refetches on an unknown kid (with a cooldown).
    this.jwks = createRemoteJWKSet(new URL(jwks_uri), { timeoutDuration: 5000, cacheMaxAge: 10 * 60_000 });
    return this.jwks;
  }

  get redirectUri(): string | undefined {
    return this.s.redirect_uri;
  }

  /** `audience` defaults to the configured API audience; ID tokens pass the client id. */
  async verify(token: string, audience = this.s.audience): Promise<VerifiedIdentity & { claimScopes: string[] }> {
    let payload: JWTPayload;
    try {
      const keys = await this.keys();
      ({ payload } = await jwtVerify(token, keys, { issuer: this.issuer, audience, algorithms: ['RS256'] }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired)
        throw new TokenRejected(`Token from ${this.displayName} has expired; get a new one`);
      if (err instanceof joseErrors.JWTClaimValidationFailed)
        throw new TokenRejected(`Invalid token: claim '${err.claim}' check failed (${err.reason})`);
      // Anything that is not a verdict on the token (timeouts, refused connections, a broken key set) is the IdP being down.
      if (
        err instanceof joseErrors.JWKSTimeout ||
        err instanceof joseErrors.JWKSInvalid ||
        !(err instanceof joseErrors.JOSEError)
      ) {
        if ((err as { statusCode?: number }).statusCode === 503) throw err;
        throw unavailable(
          'SB_ERR_IDP_UNAVAILABLE',
          `Identity provider '${this.kind}' key set is unreachable: ${(err as Error).message}`,
          err,
        );
      }
      throw new TokenRejected(`Invalid token: not signed by ${this.displayName} (${(err as Error).message})`);
    }
    const groups = stringList(payload.groups ?? payload['cognito:groups']);
    const clientId = [payload.azp, payload.client_id, payload.appid, payload.cid].find((v) => typeof v === 'string') as
      | string
      | undefined;
    const username = [payload.preferred_username, payload.username, payload.email, clientId, payload.sub].find(
      (v) => typeof v === 'string' && v,
    ) as string | undefined;
    if (!username) throw new TokenRejected('Invalid token: no subject');
    return {
      username,
      client_id: clientId,
      groups,
      scopes: [],
      claimScopes: stringList(payload.scope ?? payload.scp),
      auth_method: this.kind,
      provider: this.kind,
      expiresAt: (payload.exp ?? Math.floor(Date.now() / 1000) + 300) * 1000,
    };
  }

  /** Authorization-code exchange for browser login; returns the ID token (or the access token). */
  async exchangeCode(
    code: string,
    redirectUri: string,
    codeVerifier: string,
  ): Promise<{ token: string; audience?: string }> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: codeVerifier,
    });
    const body = await this.tokenRequest(form, 'authorization code');
    if (typeof body.id_token === 'string') return { token: body.id_token, audience: this.s.client_id };
    return { token: body.access_token as string };
  }

  /** M2M: an access token for the configured client, by the client-credentials grant. */
  async clientCredentials(): Promise<{
    access_token: string;
    token_type: string;
    expires_in?: number;
    scope?: string;
  }> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (this.s.m2m_scope) form.set('scope', this.s.m2m_scope);
    if (this.s.audience && this.kind === 'auth0') form.set('audience', this.s.audience);
    const body = await this.tokenRequest(form, 'client-credentials');
    return {
      access_token: body.access_token as string,
      token_type: typeof body.token_type === 'string' ? body.token_type : 'Bearer',
      expires_in: typeof body.expires_in === 'number' ? body.expires_in : undefined,
      scope: typeof body.scope === 'string' ? body.scope : undefined,
    };
  }

  private async tokenRequest(form: URLSearchParams, grant: string): Promise<Record<string, unknown>> {
    const clientId = this.s.client_id;
    const secret = this.s.client_secret;
    if (!clientId || !secret)
      throw unavailable(
        'SB_ERR_IDP_NOT_CONFIGURED',
        `Identity provider '${this.kind}' has no client_id/client_secret configured`,
      );
    const { token_endpoint } = await this.endpoints();
    if (!token_endpoint)
      throw unavailable(
        'SB_ERR_IDP_NOT_CONFIGURED',
        `Identity provider '${this.kind}' has no token endpoint configured`,
      );
    let res: Response;
    try {
      res = await fetch(token_endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
        },
        body: form,
        signal: AbortSignal.timeout(10_000),
      });
    } catch (err) {
      throw unavailable(
        'SB_ERR_IDP_UNAVAILABLE',
        `Identity provider '${this.kind}' is unreachable at ${token_endpoint}: ${(err as Error).message}`,
        err,
      );
    }
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok || typeof body.access_token !== 'string') {
      throw badGateway(
        'SB_ERR_IDP_BAD_RESPONSE',
        `Identity provider '${this.kind}' refused the ${grant} grant (${res.status}${typeof body.error === 'string' ? `: ${body.error}` : ''})`,
      );
    }
    return body;
  }
}

export function buildIdpVerifier(s: IdpSettings): Idp {
  return new Idp(s);
}
