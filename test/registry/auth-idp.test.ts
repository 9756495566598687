import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
// @ts-expect-error oidc-provider ships no type declarations
import Provider from 'oidc-provider';
import { makeApp } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';
import { endpointsFor } from '../../plugins/registry/auth/idp.ts';

/**
 * A real OpenID provider (oidc-provider) on 127.0.0.1: client-credentials
 * grant, RS256 JWT access tokens with a `groups` claim per client.
 */
interface TestIdp {
  url: string;
  issuer: string;
  privateKey: CryptoKey;
  kid: string;
  token(clientId: string): Promise<string>;
  close(): Promise<void>;
}

const CLIENTS: Record<string, { secret: string; groups: string[] }> = {
  'svc-admin': { secret: 'svc-admin-secret', groups: ['mcp-registry-admin'] },
  // An Entra-style object-ID GUID: the restricted scope maps it as well as a name.
  'svc-restricted': { secret: 'svc-restricted-secret', groups: ['5f0c3a9e-2b1d-4c7e-9a8f-1e2d3c4b5a69'] },
  'svc-nobody': { secret: 'svc-nobody-secret', groups: ['unmapped-group'] },
};

/** Browser users of the test IdP and their groups (released in the ID token). */
const USERS: Record<string, string[]> = { alice: ['mcp-servers-restricted'], bob: ['mcp-registry-admin'] };
const WEB_CLIENT = {
  client_id: 'registry-web',
  client_secret: 'registry-web-secret',
  redirect_uri: 'http://registry.test/api/auth/auth/callback',
};

async function startIdp(pathPrefix: string, routes: Record<string, string> = {}): Promise<TestIdp> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'test-key-1';
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' } as JWK;
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${url}${pathPrefix}`;
  const provider = new Provider(issuer, {
    clients: [
      ...Object.entries(CLIENTS).map(([client_id, c]) => ({
        client_id,
        client_secret: c.secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      })),
      {
        client_id: WEB_CLIENT.client_id,
        client_secret: WEB_CLIENT.client_secret,
        redirect_uris: [WEB_CLIENT.redirect_uri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, preferred_username: id, groups: USERS[id] ?? [] }),
    }),
    claims: { openid: ['sub', 'preferred_username', 'groups'] },
    conformIdTokenClaims: false,
    jwks: { keys: [jwk as never] },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => 'urn:mcp-registry',
        useGrantedResource: async () => true,
        getResourceServerInfo: async () => ({
          scope: 'registry',
          audience: 'mcp-registry',
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: async (_ctx: unknown, token: { clientId?: string }) => ({
      groups: CLIENTS[token.clientId ?? '']?.groups ?? [],
    }),
    routes,
  });
  server.on('request', provider.callback());
  return {
    url,
    issuer,
    privateKey,
    kid,
    async token(clientId) {
      const res = await fetch(`${url}${routes.token ?? '/token'}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${CLIENTS[clientId].secret}`).toString('base64')}`,
        },
        body: 'grant_type=client_credentials',
      });
      const body = (await res.json()) as { access_token: string };
      if (!res.ok) throw new Error(`token request failed: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const rpc = (method: string, tool?: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: tool ? { name: tool } : {} });

t.test('generic OIDC issuer: discovery, JWKS, groups -> scopes', async (t) => {
  const idp = await startIdp('');
  t.teardown(() => idp.close());
  const app = await makeApp(t, {
    registry: {
      idp: {
        provider: 'oidc',
        issuer: idp.issuer,
        audience: 'mcp-registry',
        client_id: 'svc-admin',
        client_secret: 'svc-admin-secret',
      },
    },
  });
  const v = (token: string, url: string, body?: string) =>
    app.inject({
      url: '/validate',
      headers: { authorization: `Bearer ${token}`, 'x-original-url': url, ...(body ? { 'x-body': body } : {}) },
    });

  const adminToken = await idp.token('svc-admin');
  let res = await v(adminToken, '/anything/mcp', rpc('tools/call', 'x'));
  t.equal(res.statusCode, 200);
  t.equal(res.headers['x-auth-method'], 'oidc');
  t.equal(res.headers['x-client-id'], 'svc-admin');
  t.equal(res.headers['x-groups'], 'mcp-registry-admin');
  t.equal(res.headers['x-scopes'], 'mcp-registry-admin mcp-registry-user');

  const restricted = await idp.token('svc-restricted');
  res = await v(restricted, '/currenttime/mcp', rpc('tools/call', 'current_time_by_timezone'));
  t.equal(res.statusCode, 200, 'a GUID group maps to the restricted scope');
  t.equal(res.json().scopes[0], 'mcp-servers-restricted');
  res = await v(restricted, '/currenttime/mcp', rpc('tools/call', 'other'));
  t.equal(res.statusCode, 403);
  res = await v(restricted, '/fininfo/mcp', rpc('tools/list'));
  t.equal(res.statusCode, 403);
  t.equal(res.json().detail, 'Access denied to fininfo.tools/list');

  const nobody = await idp.token('svc-nobody');
  res = await v(nobody, '/currenttime/mcp', rpc('tools/list'));
  t.equal(res.statusCode, 403, 'valid token, unmapped group: no access');
  res = await app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${nobody}` } });
  t.equal(res.statusCode, 200);
  t.same(res.json().scopes, []);
  t.equal(res.json().is_admin, false);

  // Tokens signed with the IdP's own key but wrong in one respect.
  const sign = (claims: Record<string, unknown>, iss: string, exp: number | string) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: idp.kid })
      .setIssuer(iss)
      .setAudience('mcp-registry')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(exp)
      .sign(idp.privateKey);
  const expired = await sign(
    { sub: 'svc-admin', groups: ['mcp-registry-admin'] },
    idp.issuer,
    Math.floor(Date.now() / 1000) - 3600,
  );
  res = await v(expired, '/anything/mcp', rpc('tools/list'));
  t.equal(res.statusCode, 401);
  t.equal(res.headers['www-authenticate'], 'Bearer');
  t.match(res.json().detail, /expired/);
  const wrongIssuer = await sign(
    { sub: 'svc-admin', groups: ['mcp-registry-admin'] },
    'https://evil.example/realms/x',
    '1h',
  );
  res = await v(wrongIssuer, '/anything/mcp', rpc('tools/list'));
  t.equal(res.statusCode, 401);
  t.match(res.json().detail, /iss/);
  const wrongAudience = await new SignJWT({ sub: 'x', groups: ['mcp-registry-admin'] })
    .setProtectedHeader({ alg: 'RS256', kid: idp.kid })
    .setIssuer(idp.issuer)
    .setAudience('another-api')
    .setExpirationTime('1h')
    .sign(idp.privateKey);
  res = await v(wrongAudience, '/anything/mcp', rpc('tools/list'));
  t.equal(res.statusCode, 401);
  const { privateKey: otherKey } = await generateKeyPair('RS256');
  const otherSigner = await new SignJWT({ sub: 'x', groups: ['mcp-registry-admin'] })
    .setProtectedHeader({ alg: 'RS256', kid: idp.kid })
    .setIssuer(idp.issuer)
    .setAudience('mcp-registry')
    .setExpirationTime('1h')
    .sign(otherKey);
  res = await v(otherSigner, '/anything/mcp', rpc('tools/list'));
  t.equal(res.statusCode, 401, 'signed by someone else');
  const hsForged = await new SignJWT({ sub: 'x', groups: ['mcp-registry-admin'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(idp.issuer)
    .setAudience('mcp-registry')
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode('x'.repeat(32)));
  res = await v(hsForged, '/anything/mcp', rpc('tools/list'));
  t.equal(res.statusCode, 401, 'HS256 with the IdP issuer is refused');

  // The admin's M2M token comes from the IdP and works here.
  res = await app.inject({ url: '/api/admin/tokens', headers: await asUser(app, ['mcp-registry-admin']) });
  t.equal(res.statusCode, 200);
  t.equal(res.json().provider, 'oidc');
  res = await v(res.json().access_token, '/anything/mcp', rpc('tools/call', 'x'));
  t.equal(res.statusCode, 200);
  t.equal(res.json().client_id, 'svc-admin');
  res = await app.inject({ url: '/api/admin/tokens', headers: await asUser(app, ['mcp-registry-user']) });
  t.equal(res.statusCode, 403);
});

t.test('keycloak issuer form {url}/realms/{realm} with its endpoint paths', async (t) => {
  const oc = '/realms/mcp/protocol/openid-connect';
  const idp = await startIdp('/realms/mcp', { jwks: `${oc}/certs`, token: `${oc}/token`, authorization: `${oc}/auth` });
  t.teardown(() => idp.close());
  const app = await makeApp(t, {
    registry: {
      idp: {
        provider: 'keycloak',
        url: `${idp.url}/`,
        realm: 'mcp',
        client_id: 'svc-admin',
        client_secret: 'svc-admin-secret',
      },
    },
  });
  const token = await idp.token('svc-restricted');
  let res = await app.inject({
    url: '/validate',
    headers: {
      'x-authorization': `Bearer ${token}`,
      'x-original-url': '/currenttime/mcp',
      'x-body': rpc('tools/list'),
    },
  });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['x-auth-method'], 'keycloak');
  res = await app.inject({ url: '/api/admin/tokens', headers: await asUser(app, ['mcp-registry-admin']) });
  t.equal(res.statusCode, 200, 'M2M via the derived token endpoint');
});

t.test('M2M token: 503 naming the IdP when it is unreachable', async (t) => {
  const app = await makeApp(t, {
    registry: {
      idp: { provider: 'keycloak', url: 'http://127.0.0.1:1', realm: 'mcp', client_id: 'c', client_secret: 's' },
    },
  });
  const res = await app.inject({ url: '/api/admin/tokens', headers: await asUser(app, ['mcp-registry-admin']) });
  t.equal(res.statusCode, 503);
  t.match(res.json().detail, /Identity provider 'keycloak' is unreachable/);
  t.notMatch(JSON.stringify(res.json()), /"s"|client_secret/);
  // A token from that IdP cannot be checked either: 503, not a verdict on the token.
  const { privateKey } = await generateKeyPair('RS256');
  const token = await new SignJWT({ sub: 'x' })
    .setProtectedHeader({ alg: 'RS256', kid: 'k' })
    .setIssuer('http://127.0.0.1:1/realms/mcp')
    .setExpirationTime('1h')
    .sign(privateKey);
  const v = await app.inject({ url: '/validate', headers: { authorization: `Bearer ${token}` } });
  t.equal(v.statusCode, 503);
  t.match(v.json().detail, /keycloak/);
});

t.test('issuer forms per AUTH_PROVIDER', async (t) => {
  t.same(endpointsFor({ provider: 'keycloak', url: 'https://kc.example/', realm: 'r' }), {
    issuer: 'https://kc.example/realms/r',
    jwks_uri: 'https://kc.example/realms/r/protocol/openid-connect/certs',
    token_endpoint: 'https://kc.example/realms/r/protocol/openid-connect/token',
    authorization_endpoint: 'https://kc.example/realms/r/protocol/openid-connect/auth',
  });
  t.equal(endpointsFor({ provider: 'entra', tenant_id: 'tid' }).issuer, 'https://login.microsoftonline.com/tid/v2.0');
  t.equal(
    endpointsFor({ provider: 'entra', tenant_id: 'tid' }).jwks_uri,
    'https://login.microsoftonline.com/tid/discovery/v2.0/keys',
  );
  t.equal(endpointsFor({ provider: 'okta', domain: 'dev-1.okta.com' }).issuer, 'https://dev-1.okta.com/oauth2/default');
  t.equal(
    endpointsFor({ provider: 'cognito', region: 'eu-west-1', user_pool_id: 'eu-west-1_AbC' }).issuer,
    'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC',
  );
  t.equal(
    endpointsFor({ provider: 'cognito', region: 'eu-west-1', user_pool_id: 'p' }).jwks_uri,
    'https://cognito-idp.eu-west-1.amazonaws.com/p/.well-known/jwks.json',
  );
  t.equal(endpointsFor({ provider: 'auth0', domain: 'acme.auth0.com' }).issuer, 'https://acme.auth0.com/');
  t.equal(endpointsFor({ provider: 'oidc', issuer: 'https://id.example' }).issuer, 'https://id.example');
  t.throws(() => endpointsFor({ provider: 'keycloak', url: 'https://kc' }), {
    name: 'StartupError',
    message: /registry\.idp\.realm/,
  });
  t.throws(() => endpointsFor({ provider: 'entra' }), { name: 'StartupError', message: /tenant_id/ });
});

/** A tiny cookie jar over fetch with manual redirects, enough to walk the IdP's dev login pages. */
async function browserLogin(startUrl: string, username: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = startUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 12; step++) {
    if (url.startsWith(WEB_CLIENT.redirect_uri)) return url;
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    form = undefined;
    const location = res.headers.get('location');
    if (location) {
      url = new URL(location, url).toString();
      continue;
    }
    const html = await res.text();
    const action = /action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`unexpected IdP page (${res.status}): ${html.slice(0, 200)}`);
    url = new URL(action, url).toString();
    form = new URLSearchParams(prompt === 'login' ? { prompt, login: username, password: 'any' } : { prompt });
  }
  throw new Error('login did not come back to the registry');
}

t.test('browser login through the IdP: authorization code -> session cookie with mapped scopes', async (t) => {
  const idp = await startIdp('');
  t.teardown(() => idp.close());
  const app = await makeApp(t, {
    registry: {
      idp: {
        provider: 'oidc',
        issuer: idp.issuer,
        client_id: WEB_CLIENT.client_id,
        client_secret: WEB_CLIENT.client_secret,
        redirect_uri: WEB_CLIENT.redirect_uri,
      },
    },
  });
  const start = await app.inject({ url: '/api/auth/auth/oidc' });
  t.equal(start.statusCode, 302);
  const stateCookie = String(start.headers['set-cookie']).split(';')[0];
  const back = new URL(await browserLogin(start.headers.location as string, 'alice'));
  t.ok(back.searchParams.get('code'), 'the IdP sent a code back');

  // A callback without our state cookie is refused (login CSRF).
  let res = await app.inject({ url: `/api/auth/auth/callback${back.search}` });
  t.equal(res.statusCode, 302);
  t.match(res.headers.location, /error=Login%20state%20mismatch/);

  res = await app.inject({ url: `/api/auth/auth/callback${back.search}`, headers: { cookie: stateCookie } });
  t.equal(res.statusCode, 302);
  t.equal(res.headers.location, '/');
  const session = (res.headers['set-cookie'] as string[])
    .find((c) => c.startsWith('mcp_gateway_session='))!
    .split(';')[0];
  const me = await app.inject({ url: '/api/auth/me', headers: { cookie: session } });
  t.equal(me.statusCode, 200);
  t.equal(me.json().username, 'alice');
  t.equal(me.json().provider, 'oidc');
  t.equal(me.json().auth_method, 'session_cookie');
  t.same(me.json().scopes, ['mcp-servers-restricted']);
  t.equal(me.json().is_admin, false);

  const loc = new URL(start.headers.location as string);
  t.equal(loc.searchParams.get('code_challenge_method'), 'S256', 'PKCE');

  // The same code cannot be redeemed twice.
  res = await app.inject({ url: `/api/auth/auth/callback${back.search}`, headers: { cookie: stateCookie } });
  t.equal(res.statusCode, 302);
  t.match(res.headers.location, /^\/api\/auth\/login\?error=/);
});
