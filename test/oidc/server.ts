import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
// @ts-expect-error oidc-provider ships no type declarations
import Provider, { errors as oidcErrors } from 'oidc-provider';

/**
 * A real OpenID provider (the `oidc-provider` package) on 127.0.0.1, port 0,
 * for tests that need genuine discovery, JWKS and signed access tokens.
 *
 * - Clients use the client_credentials grant (HTTP Basic client auth).
 * - Access tokens are RS256 JWTs; the `resource` of the token request picks the
 *   audience from `resources` (the first one is the default).
 * - Each client's `claims` (e.g. groups) are added to its access tokens;
 *   `ttl_seconds` shortens one client's token lifetime (expired-token tests).
 */
export interface OidcClient {
  secret: string;
  claims?: Record<string, unknown>;
  /** Space-separated scopes the client may ask for. */
  scope?: string;
  ttl_seconds?: number;
  /** Set for a client that runs the authorization code flow (PKCE S256, refresh tokens) with these callbacks. */
  redirect_uris?: string[];
}

export interface OidcServerOptions {
  clients: Record<string, OidcClient>;
  /** Resource indicator -> audience of tokens minted for it. */
  resources?: Record<string, string>;
  /** Path under the origin where the issuer lives (e.g. `/realms/test`); default none. */
  issuerPath?: string;
  /** Listen on this port (a restart on the port a test saw before); default 0. */
  port?: number;
  /**
   * Accept RFC 8693 token exchange. oidc-provider has no such grant, so this is
   * the smallest custom one: a subject token this issuer signed is traded for a
   * JWT with the same `sub`, the requested `audience` and `act.sub` = the client.
   */
  tokenExchange?: boolean;
  /**
   * End users (account id -> claims) who can sign in through oidc-provider's
   * own development login and consent pages (drive them with signIn() from
   * ./browser.ts). Their claims are served by the userinfo endpoint.
   */
  users?: Record<string, Record<string, unknown>>;
  /** Lifetime of authorization-code access tokens (default 600 s). */
  userTokenTtlSeconds?: number;
}

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

export interface OidcServer {
  /** `http://127.0.0.1:<port><issuerPath>` (no trailing slash). */
  issuer: string;
  origin: string;
  port: number;
  /** Mint an access token; `resource` selects the audience. */
  token(clientId: string, opts?: { resource?: string; scope?: string }): Promise<string>;
  /** How many JWT bearers the userinfo endpoint has been asked about (cache tests). */
  userinfoCalls(): number;
  close(): Promise<void>;
}

export async function startOidcServer(opts: OidcServerOptions): Promise<OidcServer> {
  const resources = opts.resources ?? { 'urn:switchboard': 'switchboard' };
  const users = opts.users ?? {};
  const [defaultResource] = Object.keys(resources);
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'oidc-test-1', alg: 'RS256', use: 'sig' } as JWK;

  const server: Server = createServer();
  let userinfoCalls = 0;
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}${opts.issuerPath ?? ''}`;
  const allScopes = [
    ...new Set(Object.values(opts.clients).flatMap((c) => (c.scope ?? '').split(' ').filter(Boolean))),
  ];

  const provider = new Provider(issuer, {
    clients: Object.entries(opts.clients).map(([client_id, c]) => ({
      client_id,
      client_secret: c.secret,
      grant_types: [
        'client_credentials',
        ...(opts.tokenExchange ? [TOKEN_EXCHANGE_GRANT] : []),
        ...(c.redirect_uris ? ['authorization_code', 'refresh_token'] : []),
      ],
      redirect_uris: c.redirect_uris ?? [],
      response_types: c.redirect_uris ? ['code'] : [],
      ...(c.scope ? { scope: c.scope } : {}),
    })),
    jwks: { keys: [jwk] },
    scopes: [...allScopes, 'offline_access'],
    // Every claim of a test user is released under `openid`, as an IdP with protocol mappers for them would.
    claims: { openid: ['sub', ...new Set(Object.values(users).flatMap((u) => Object.keys(u)))] },
    findAccount: async (_ctx: unknown, sub: string) =>
      users[sub] ? { accountId: sub, claims: async () => ({ ...users[sub], sub }) } : undefined,
    // Keep refresh tokens whatever the scope (Keycloak-like): refresh is part of what the tests check.
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    features: {
      devInteractions: { enabled: Boolean(opts.users) },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => defaultResource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, indicator: string) => {
          const audience = resources[indicator];
          if (!audience) throw new Error(`unknown resource ${indicator}`);
          return { scope: allScopes.join(' '), audience, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
    ttl: {
      AccessToken: () => opts.userTokenTtlSeconds ?? 600,
      ClientCredentials: (_ctx: unknown, _token: unknown, client: { clientId: string }) =>
        opts.clients[client.clientId]?.ttl_seconds ?? 600,
    },
    extraTokenClaims: async (_ctx: unknown, token: { clientId?: string }) =>
      opts.clients[token.clientId ?? '']?.claims ?? {},
  });
  if (opts.tokenExchange) {
    const params = ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'scope', 'resource'];
    provider.registerGrantType(
      TOKEN_EXCHANGE_GRANT,
      // In this oidc-provider version a grant handler gets only the context; it answers by setting the body.
      async (ctx: {
        oidc: { params: Record<string, string | undefined>; client: { clientId: string } };
        body: unknown;
      }) => {
        const { subject_token, audience, scope } = ctx.oidc.params;
        if (!audience) throw new oidcErrors.InvalidTarget('audience is required');
        let sub: string;
        try {
          const { payload } = await jwtVerify(subject_token ?? '', publicKey, { issuer });
          sub = String(payload.sub ?? payload.client_id);
        } catch (err) {
          throw new oidcErrors.InvalidGrant(
            `subject_token is not a valid token of this issuer (${(err as Error).message})`,
          );
        }
        const now = Math.floor(Date.now() / 1000);
        const access_token = await new SignJWT({
          client_id: ctx.oidc.client.clientId,
          act: { sub: ctx.oidc.client.clientId },
          ...(scope ? { scope } : {}),
        })
          .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt' })
          .setIssuer(issuer)
          .setSubject(sub)
          .setAudience(audience)
          .setIssuedAt(now)
          .setExpirationTime(now + 300)
          .setJti(randomUUID())
          .sign(privateKey);
        ctx.body = {
          access_token,
          issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          token_type: 'Bearer',
          expires_in: 300,
        };
      },
      params,
    );
  }
  // oidc-provider wants an issuer path prefix stripped before it routes.
  const callback = provider.callback();
  const prefix = opts.issuerPath ?? '';
  server.on('request', (req, res) => {
    if (prefix && req.url?.startsWith(prefix)) req.url = req.url.slice(prefix.length) || '/';
    if (req.url?.split('?')[0] === '/me' && jwtUserinfo(req, res)) return;
    callback(req, res);
  });

  /**
   * Keycloak's userinfo accepts its own JWT access tokens whatever their
   * audience; oidc-provider refuses any token minted for a resource server
   * there. Platform callers hold exactly such tokens (audience switchboard),
   * so JWT bearers of this issuer are answered here, from the same accounts;
   * opaque tokens still go to oidc-provider's own userinfo.
   */
  const jwtUserinfo = (req: IncomingMessage, res: ServerResponse): boolean => {
    const bearer = /^bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (typeof bearer !== 'string' || bearer.split('.').length !== 3) return false;
    userinfoCalls++;
    jwtVerify(bearer, publicKey, { issuer })
      .then(({ payload }) => {
        const sub = String(payload.sub);
        const claims = users[sub];
        if (!claims) throw new Error('unknown account');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...claims, sub }));
      })
      .catch(() => {
        res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
      });
    return true;
  };

  return {
    issuer,
    origin,
    port: (server.address() as AddressInfo).port,
    async token(clientId, t = {}) {
      const client = opts.clients[clientId];
      if (!client) throw new Error(`no test client ${clientId}`);
      const body = new URLSearchParams({ grant_type: 'client_credentials' });
      if (t.resource) body.set('resource', t.resource);
      if (t.scope) body.set('scope', t.scope);
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${client.secret}`).toString('base64')}`,
        },
        body,
      });
      const json = (await res.json()) as { access_token?: string };
      if (!res.ok || !json.access_token)
        throw new Error(`token request for ${clientId} failed: ${res.status} ${JSON.stringify(json)}`);
      return json.access_token;
    },
    userinfoCalls: () => userinfoCalls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
