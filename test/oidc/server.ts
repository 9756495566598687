import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
// @ts-expect-error oidc-provider ships no type declarations
import Provider from 'oidc-provider';

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
}

export interface OidcServerOptions {
  clients: Record<string, OidcClient>;
  /** Resource indicator -> audience of tokens minted for it. */
  resources?: Record<string, string>;
  /** Path under the origin where the issuer lives (e.g. `/realms/test`); default none. */
  issuerPath?: string;
  /** Listen on this port (a restart on the port a test saw before); default 0. */
  port?: number;
}

export interface OidcServer {
  /** `http://127.0.0.1:<port><issuerPath>` (no trailing slash). */
  issuer: string;
  origin: string;
  port: number;
  /** Mint an access token; `resource` selects the audience. */
  token(clientId: string, opts?: { resource?: string; scope?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function startOidcServer(opts: OidcServerOptions): Promise<OidcServer> {
  const resources = opts.resources ?? { 'urn:switchboard': 'switchboard' };
  const [defaultResource] = Object.keys(resources);
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'oidc-test-1', alg: 'RS256', use: 'sig' } as JWK;

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}${opts.issuerPath ?? ''}`;
  const allScopes = [...new Set(Object.values(opts.clients).flatMap((c) => (c.scope ?? '').split(' ').filter(Boolean)))];

  const provider = new Provider(issuer, {
    clients: Object.entries(opts.clients).map(([client_id, c]) => ({
      client_id,
      client_secret: c.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      ...(c.scope ? { scope: c.scope } : {}),
    })),
    jwks: { keys: [jwk] },
    scopes: allScopes,
    features: {
      devInteractions: { enabled: false },
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
      ClientCredentials: (_ctx: unknown, _token: unknown, client: { clientId: string }) => opts.clients[client.clientId]?.ttl_seconds ?? 600,
    },
    extraTokenClaims: async (_ctx: unknown, token: { clientId?: string }) => opts.clients[token.clientId ?? '']?.claims ?? {},
  });
  // oidc-provider wants an issuer path prefix stripped before it routes.
  const callback = provider.callback();
  const prefix = opts.issuerPath ?? '';
  server.on('request', (req, res) => {
    if (prefix && req.url?.startsWith(prefix)) req.url = req.url.slice(prefix.length) || '/';
    callback(req, res);
  });

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
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${client.secret}`).toString('base64')}` },
        body,
      });
      const json = (await res.json()) as { access_token?: string };
      if (!res.ok || !json.access_token) throw new Error(`token request for ${clientId} failed: ${res.status} ${JSON.stringify(json)}`);
      return json.access_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
