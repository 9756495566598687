import { timingSafeEqual } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { UserContext } from './context.ts';
import type { AdminCredentials } from './keys.ts';
import { TokenCache } from './token-cache.ts';
import type { ScopeStore } from './scope-store.ts';
import type { Collection, Store } from '../../../core/store.ts';
import { SESSION_COOKIE, readCookie, verifySession, type SessionPayload } from './session.ts';
import { SELF_ISSUER, TokenRejected, verifySelfToken, type VerifiedIdentity } from './self-tokens.ts';

/** Verifies identity-provider (RS256) tokens; absent when no IdP is configured. */
export interface IdentityProvider {
  readonly kind: string;
  readonly issuer: string;
  verify(token: string): Promise<VerifiedIdentity & { claimScopes: string[] }>;
}

export const ADMIN_GROUP = 'mcp-registry-admin';

export type CredentialSource = 'bearer' | 'basic' | 'cookie' | 'none';

export interface Identified {
  user?: UserContext;
  failure?: string;
  source: CredentialSource;
  /** The session, when the credential was the session cookie (CSRF is bound to its sid). */
  session?: SessionPayload;
}

type Headers = Record<string, string | string[] | undefined>;

function header(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Turns request headers into a UserContext. Verified tokens are cached until
 * they expire (bounded LRU), so the hot path of /validate is a map lookup.
 */
export class Authenticator {
  private readonly cache = new TokenCache<{
    ctx: UserContext;
    version: number;
    identity: VerifiedIdentity & { claimScopes?: string[] };
  }>(10_000);

  /** Logged-out session ids until their cookie would have expired, shared by replicas through the core store. */
  private readonly revoked: Collection<true>;

  constructor(
    readonly secretKey: Uint8Array,
    readonly admin: AdminCredentials,
    readonly scopes: ScopeStore,
    readonly idp: IdentityProvider | undefined,
    store: Store,
    /**
     * When the store's current data began (StoreSeeds.epoch). The revocation list lives in that data, so a
     * session issued before it is refused: it may have been logged out in data a store restarted empty lost.
     */
    private readonly storeEpoch: () => Promise<number>,
  ) {
    this.revoked = store.collection<true>('registry_revoked_sessions');
  }

  /**
   * Run before a session is issued: an emptied store is seeded again first, so the new session is not
   * older than the data its logout will be recorded in (it would be refused at once).
   */
  async readyForSessions(): Promise<void> {
    await this.storeEpoch();
  }

  /** Logout: the cookie stops working everywhere, even if a copy of it survives in some browser or log. */
  async revokeSession(s: SessionPayload): Promise<void> {
    const ttl = s.exp * 1000 - Date.now();
    if (ttl > 0) await this.revoked.set(s.sid, true, ttl);
  }

  /**
   * The hot path without a promise: a bearer token already verified and still
   * fresh. Undefined means "take the full path" (identify()).
   */
  identifyCached(h: Headers): Identified | undefined {
    const raw = header(h, 'x-authorization') ?? header(h, 'authorization');
    if (raw?.charCodeAt(0) !== 66 /* B */ || !raw.startsWith('Bearer ')) return undefined;
    const hit = this.cache.get(raw.slice(7).trim());
    if (!hit || hit.version !== this.scopes.version) return undefined;
    return { source: 'bearer', user: hit.ctx };
  }

  /** The bearer token: X-Authorization, then Authorization; else the session cookie. */
  async identify(h: Headers): Promise<Identified> {
    const raw = header(h, 'x-authorization') ?? header(h, 'authorization');
    if (raw) {
      const sp = raw.indexOf(' ');
      const scheme = sp > 0 ? raw.slice(0, sp).toLowerCase() : '';
      const value = sp > 0 ? raw.slice(sp + 1).trim() : raw.trim();
      if (scheme === 'basic') return this.basic(value);
      return this.bearer(value);
    }
    const cookie = readCookie(header(h, 'cookie'), SESSION_COOKIE);
    if (cookie !== undefined) {
      const session = verifySession(this.secretKey, cookie);
      const [since, revoked] = session
        ? await Promise.all([this.storeEpoch(), this.revoked.get(session.sid)])
        : [Infinity, undefined];
      if (!session || revoked || (session.issued ?? 0) < since)
        return { source: 'cookie', failure: 'Session expired or invalid; log in again at /api/auth/login' };
      return { source: 'cookie', session, user: this.fromSession(session) };
    }
    return { source: 'none' };
  }

  checkAdminPassword(username: string, password: string): boolean {
    // Both compared in full so timing does not tell which one was wrong.
    const u = safeEqual(username, this.admin.username);
    const p = safeEqual(password, this.admin.password);
    return u && p;
  }

  adminContext(auth_method: string): UserContext {
    const groups = [ADMIN_GROUP];
    return this.build({
      username: this.admin.username,
      groups,
      scopes: this.scopes.scopesForGroups(groups),
      auth_method,
      provider: 'local',
      expiresAt: Infinity,
    });
  }

  private basic(value: string): Identified {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0 || !this.checkAdminPassword(decoded.slice(0, colon), decoded.slice(colon + 1))) {
      return { source: 'basic', failure: 'Invalid username or password' };
    }
    return { source: 'basic', user: this.adminContext('basic') };
  }

  private async bearer(token: string): Promise<Identified> {
    const now = Date.now();
    const hit = this.cache.get(token, now);
    if (hit) {
      if (hit.version === this.scopes.version) return { source: 'bearer', user: hit.ctx };
      const ctx = this.contextFor(hit.identity);
      this.cache.set(token, { ctx, version: this.scopes.version, identity: hit.identity }, hit.identity.expiresAt);
      return { source: 'bearer', user: ctx };
    }
    let identity: VerifiedIdentity & { claimScopes?: string[] };
    try {
      let iss: string | undefined;
      try {
        iss = decodeJwt(token).iss;
      } catch {
        throw new TokenRejected('Invalid token: not a JWT');
      }
      if (iss === SELF_ISSUER) identity = await verifySelfToken(this.secretKey, token);
      else if (this.idp) identity = await this.idp.verify(token);
      else
        throw new TokenRejected(
          `Invalid token: issuer '${iss ?? '(none)'}' is not trusted (no identity provider is configured)`,
        );
    } catch (err) {
      if (err instanceof TokenRejected) return { source: 'bearer', failure: err.message };
      throw err;
    }
    const ctx = this.contextFor(identity);
    this.cache.set(token, { ctx, version: this.scopes.version, identity }, identity.expiresAt);
    return { source: 'bearer', user: ctx };
  }

  private contextFor(identity: VerifiedIdentity & { claimScopes?: string[] }): UserContext {
    if (identity.claimScopes === undefined) return this.build(identity);
    // IdP tokens: scopes come from group mappings, plus any OAuth scope that names a scope document.
    const mapped = new Set([
      ...this.scopes.scopesForGroups(identity.groups),
      ...identity.claimScopes.filter((s) => this.scopes.has(s)),
    ]);
    return this.build({ ...identity, scopes: [...mapped] });
  }

  private fromSession(s: SessionPayload): UserContext {
    return this.build({
      username: s.username,
      groups: s.groups,
      scopes: s.scopes,
      auth_method: 'session_cookie',
      provider: s.provider,
      expiresAt: s.exp * 1000,
    });
  }

  build(id: Omit<VerifiedIdentity, 'expiresAt'> & { expiresAt?: number }): UserContext {
    const g = this.scopes.grants(id.scopes);
    const ctx: UserContext = {
      username: id.username,
      groups: [...id.groups],
      scopes: [...id.scopes],
      auth_method: id.auth_method,
      provider: id.provider,
      is_admin: g.is_admin,
      ui_permissions: g.ui_permissions,
      server_access: g.server_access,
      agent_actions: g.agent_actions,
    };
    if (id.client_id) ctx.client_id = id.client_id;
    if (id.token_kind) ctx.token_kind = id.token_kind;
    if (id.resource) ctx.resource = Object.freeze({ ...id.resource });
    // Cached and shared by every request with the same token: a change by one request must fail loudly, not leak.
    Object.freeze(ctx.groups);
    Object.freeze(ctx.scopes);
    return Object.freeze(ctx);
  }
}
