import { createHash, randomBytes } from 'node:crypto';
import { badRequest, forbidden } from '../../core/errors.ts';
import type { Fernet } from '../../core/crypto/fernet.ts';
import type { Collection, Store } from '../../core/store.ts';
import type { CompleteAuthRequest, CredentialProvider, TokenResult } from '../../core/primitives/identity.ts';
import type { Issuer, TokenAnswer } from './issuer.ts';

/** How long a user has to authorise at the issuer before the pending session is forgotten. */
const SESSION_TTL_MS = 10 * 60_000;
/** A stored token this close to its expiry is refreshed (or re-authorised) rather than handed out. */
const EXPIRY_MARGIN_MS = 30_000;
/** The reference's session_uri is a URI; ours is this prefix and the OAuth `state`. */
export const SESSION_PREFIX = 'urn:switchboard:identity:auth-session:';
/** What custom_parameters may not set: the parameters that make the flow this caller's. */
const PROTOCOL_PARAMS = new Set([
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'request',
  'request_uri',
]);

/** A USER_FEDERATION authorization waiting for the user: bound to who asked, and for which user. */
interface PendingAuth {
  credential_provider: string;
  /** The platform principal that started it: only it may complete it. */
  principal_id: string;
  /** Whose tokens these become: the workload token's user, else the principal. */
  user_id: string;
  redirect_uri: string;
  /** PKCE verifier, sealed: it is what makes a stolen code useless. */
  code_verifier: string;
  expires_at: number;
}

/** A user's delegated tokens for one credential provider; the token values are Fernet tokens. */
interface StoredTokens {
  /** The platform principal that completed the authorization: the tokens are handed to it only. */
  principal_id: string;
  access_token: string;
  refresh_token?: string;
  token_type: string;
  /** Epoch ms; absent when the issuer gave no expires_in. */
  expires_at?: number;
  scope?: string;
}

export interface FederationClient {
  id: string;
  secret: string;
}

const b64url = (b: Buffer) => b.toString('base64url');

/** The state a session_uri names: our URI, a bare state, or the callback URL the issuer redirected to. */
function parseSessionUri(raw: string): { state: string; code?: string; error?: string } {
  if (raw.startsWith(SESSION_PREFIX)) return { state: raw.slice(SESSION_PREFIX.length) };
  if (/^https?:\/\//i.test(raw)) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw badRequest('SB_ERR_IDENTITY_AUTH_SESSION_UNKNOWN', 'session_uri is not a valid URL');
    }
    const q = u.searchParams;
    const error = q.get('error');
    return {
      state: q.get('state') ?? '',
      code: q.get('code') ?? undefined,
      error: error ? `${error}${q.get('error_description') ? `: ${q.get('error_description')}` : ''}` : undefined,
    };
  }
  return { state: raw };
}

/**
 * The 3-legged (authorization code + PKCE) flow of USER_FEDERATION token
 * requests: a request with no stored token for (provider, user) answers an
 * authorization URL and a session; /auth/complete trades the code for tokens,
 * which are kept encrypted per (provider, user) and handed out (refreshed when
 * they can be) on the next token request.
 */
export class UserFederation {
  private readonly pending: Collection<PendingAuth>;
  private readonly tokens: Collection<StoredTokens>;

  constructor(
    store: Store,
    instance: string,
    private readonly fernet: Fernet,
    private readonly issuer: Issuer,
  ) {
    this.pending = store.collection<PendingAuth>(`identity_oidc_auth_sessions:${instance}`);
    this.tokens = store.collection<StoredTokens>(`identity_oidc_user_tokens:${instance}`);
  }

  private key(provider: string, user: string) {
    return `${provider}\n${user}`;
  }

  private answer(t: StoredTokens): TokenResult {
    return {
      access_token: this.fernet.decryptString(t.access_token),
      token_type: t.token_type,
      expires_in: t.expires_at === undefined ? null : Math.max(0, Math.floor((t.expires_at - Date.now()) / 1000)),
      authorization_url: null,
      session_uri: null,
    };
  }

  private async keep(
    provider: string,
    user: string,
    principalId: string,
    t: TokenAnswer,
    previousRefresh?: string,
  ): Promise<StoredTokens> {
    const refresh = t.refresh_token ?? previousRefresh;
    const stored: StoredTokens = {
      principal_id: principalId,
      access_token: this.fernet.encrypt(t.access_token),
      ...(refresh ? { refresh_token: this.fernet.encrypt(refresh) } : {}),
      token_type: t.token_type ?? 'Bearer',
      ...(typeof t.expires_in === 'number' ? { expires_at: Date.now() + t.expires_in * 1000 } : {}),
      ...(t.scope ? { scope: t.scope } : {}),
    };
    await this.tokens.set(this.key(provider, user), stored);
    return stored;
  }

  /** The user's live token for the provider, refreshed if it expired and can be; undefined when the user must authorise. */
  async stored(
    cp: CredentialProvider,
    user: string,
    principalId: string,
    client: FederationClient,
  ): Promise<TokenResult | undefined> {
    const t = await this.tokens.get(this.key(cp.name, user));
    // Another caller naming the same user gets no token: it must have the user authorise for it.
    if (!t || t.principal_id !== principalId) return undefined;
    if (t.expires_at === undefined || t.expires_at - EXPIRY_MARGIN_MS > Date.now()) return this.answer(t);
    if (!t.refresh_token) return undefined;
    const refresh = this.fernet.decryptString(t.refresh_token);
    try {
      const fresh = await this.issuer.token(
        typeof cp.config.token_url === 'string' ? cp.config.token_url : undefined,
        client,
        { grant_type: 'refresh_token', refresh_token: refresh },
        true,
      );
      return this.answer(await this.keep(cp.name, user, principalId, fresh, refresh));
    } catch (err) {
      // A refused refresh (revoked, expired) means the user authorises again; an issuer that is down is the caller's 503.
      if ((err as { statusCode?: number }).statusCode === 400) {
        await this.tokens.delete(this.key(cp.name, user));
        return undefined;
      }
      throw err;
    }
  }

  /** A deleted credential provider takes its users' tokens with it: a new one of the same name starts clean. */
  async forget(provider: string): Promise<void> {
    const doomed: string[] = [];
    for await (const [k] of this.tokens.entries()) if (k.startsWith(`${provider}\n`)) doomed.push(k);
    await Promise.all(doomed.map((k) => this.tokens.delete(k)));
  }

  /** Start an authorization: the URL the user visits, and the session /auth/complete finishes. */
  async begin(
    cp: CredentialProvider,
    client: FederationClient,
    who: { principal_id: string; user_id: string },
    redirectUri: string,
    scope: string,
    custom: Record<string, string> = {},
  ): Promise<TokenResult> {
    const configured = typeof cp.config.authorization_url === 'string' ? cp.config.authorization_url : undefined;
    const endpoint = configured ?? (await this.issuer.metadata()).authorization_endpoint;
    if (!endpoint)
      throw badRequest(
        'SB_ERR_IDENTITY_PROVIDER_INCOMPLETE',
        `The issuer ${this.issuer.url} publishes no authorization_endpoint; set config.authorization_url on credential provider '${cp.name}'`,
      );
    const own = Object.keys(custom).filter((k) => PROTOCOL_PARAMS.has(k));
    if (own.length > 0)
      throw badRequest(
        'SB_ERR_IDENTITY_CUSTOM_PARAMETER',
        `custom_parameters cannot set ${own.join(', ')}: Switchboard sets the protocol's own parameters (state and PKCE bind the flow to you)`,
      );
    const state = b64url(randomBytes(32));
    const verifier = b64url(randomBytes(48));
    const url = new URL(endpoint);
    const q = url.searchParams;
    for (const [k, v] of Object.entries(custom)) q.set(k, v);
    q.set('response_type', 'code');
    q.set('client_id', client.id);
    q.set('redirect_uri', redirectUri);
    q.set('scope', scope || 'openid');
    q.set('state', state);
    q.set('code_challenge', b64url(createHash('sha256').update(verifier).digest()));
    q.set('code_challenge_method', 'S256');
    const resource = typeof cp.config.resource === 'string' ? cp.config.resource : undefined;
    if (resource) q.set('resource', resource);
    await this.pending.set(
      state,
      {
        credential_provider: cp.name,
        principal_id: who.principal_id,
        user_id: who.user_id,
        redirect_uri: redirectUri,
        code_verifier: this.fernet.encrypt(verifier),
        expires_at: Date.now() + SESSION_TTL_MS,
      },
      SESSION_TTL_MS,
    );
    return {
      access_token: null,
      token_type: 'Bearer',
      expires_in: null,
      authorization_url: url.toString(),
      session_uri: `${SESSION_PREFIX}${state}`,
    };
  }

  /**
   * Finish an authorization: only the principal that started it, for the user
   * it was started for, with the code the issuer sent back. The session is
   * spent first, so a code is exchanged at most once.
   */
  async complete(
    req: CompleteAuthRequest,
    principalId: string | undefined,
    verifiedUser: string | undefined,
    providerFor: (name: string) => Promise<{ cp: CredentialProvider; client: FederationClient }>,
  ): Promise<void> {
    const parsed = parseSessionUri(req.session_uri);
    const unknown = () =>
      badRequest(
        'SB_ERR_IDENTITY_AUTH_SESSION_UNKNOWN',
        'session_uri names no pending authorization (unknown, already completed, or older than 10 minutes): request a token with auth_flow USER_FEDERATION again',
      );
    if (!parsed.state) throw unknown();
    const s = await this.pending.get(parsed.state);
    if (!s || s.expires_at < Date.now()) throw unknown();
    if (principalId !== s.principal_id)
      throw forbidden(
        'SB_ERR_IDENTITY_AUTH_SESSION_FORBIDDEN',
        'This authorization was started by another caller; only that caller can complete it',
      );
    const claimed = req.user_id ?? verifiedUser;
    if (claimed !== undefined && claimed !== s.user_id)
      throw forbidden(
        'SB_ERR_IDENTITY_AUTH_SESSION_FORBIDDEN',
        'This authorization was started for another user than the one named in user_id/user_token',
      );
    if (parsed.error)
      throw badRequest(
        'SB_ERR_IDENTITY_AUTH_DENIED',
        `The issuer reported that the authorization failed (${parsed.error}); request a token again`,
      );
    const code = req.code ?? parsed.code;
    if (!code)
      throw badRequest(
        'SB_ERR_IDENTITY_AUTH_CODE_MISSING',
        'No authorization code: pass the callback URL the issuer redirected to as session_uri, or the code in `code`',
      );
    if (!(await this.pending.delete(parsed.state))) throw unknown();
    const { cp, client } = await providerFor(s.credential_provider);
    const t = await this.issuer.token(
      typeof cp.config.token_url === 'string' ? cp.config.token_url : undefined,
      client,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: s.redirect_uri,
        code_verifier: this.fernet.decryptString(s.code_verifier),
      },
      true,
      'the authorization code is wrong, spent or expired: request a token with auth_flow USER_FEDERATION again',
    );
    await this.keep(cp.name, s.user_id, s.principal_id, t);
  }
}
