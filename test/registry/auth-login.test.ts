import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { registryAuthOf } from '../../plugins/registry/auth/index.ts';
import { verifySession } from '../../plugins/registry/auth/session.ts';
import { adminSession } from '../helpers/registry-auth.ts';

const PASSWORD = 'login-test-password';

function cookiesOf(res: { headers: Record<string, unknown> }): Record<string, string> {
  const raw = res.headers['set-cookie'];
  const list = Array.isArray(raw) ? raw : raw ? [String(raw)] : [];
  return Object.fromEntries(list.map((c) => c.split(';')[0].split('=') as [string, string]));
}

t.test('local admin login', async (t) => {
  const app = await makeApp(t, { registry: { admin_user: 'root', admin_password: PASSWORD } });
  const key = registryAuthOf(app).authenticator.secretKey;

  t.test('login form on both paths', async (t) => {
    for (const url of ['/api/auth/login', '/login']) {
      const res = await app.inject({ url });
      t.equal(res.statusCode, 200);
      t.match(res.headers['content-type'], /text\/html/);
      t.match(res.body, /<form method="post" action="\/api\/auth\/login">/);
    }
    const res = await app.inject({ url: '/api/auth/login?error=%3Cscript%3Ealert(1)%3C/script%3E' });
    t.notMatch(res.body, /<script>alert/, 'error text is escaped');
    t.match(res.body, /&#60;script&#62;/);
  });

  t.test('success: signed HttpOnly SameSite=Lax 8 h cookie, 302 home', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: `username=root&password=${PASSWORD}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.equal(res.statusCode, 302);
    t.equal(res.headers.location, '/');
    const raw = (res.headers['set-cookie'] as string[]).find((c) => c.startsWith('mcp_gateway_session='))!;
    t.match(raw, /HttpOnly/);
    t.match(raw, /SameSite=Lax/);
    t.match(raw, /Max-Age=28800/);
    t.match(raw, /Path=\//);
    t.notMatch(raw, /Secure/, 'plain http in development');
    const value = decodeURIComponent(cookiesOf(res).mcp_gateway_session);
    const s = verifySession(key, value)!;
    t.equal(s.username, 'root');
    t.same(s.groups, ['mcp-registry-admin']);
    t.same(s.scopes.sort(), ['mcp-registry-admin', 'mcp-registry-user']);
    t.equal(s.provider, 'local');
    t.ok(s.exp * 1000 - Date.now() > 7.9 * 3600_000);
    const me = await app.inject({
      url: '/api/auth/me',
      headers: { cookie: `mcp_gateway_session=${cookiesOf(res).mcp_gateway_session}` },
    });
    t.equal(me.statusCode, 200);
    t.equal(me.json().auth_method, 'session_cookie');
    t.equal(me.json().is_admin, true);
  });

  t.test('failure: 401, no cookie; a tampered cookie is no session', async (t) => {
    for (const payload of [
      { username: 'root', password: 'nope' },
      { username: 'admin', password: PASSWORD },
      { username: 'root', password: `${PASSWORD}x` },
    ]) {
      const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload });
      t.equal(res.statusCode, 401);
      t.notOk(res.headers['set-cookie']);
      t.equal(res.json().code, 'SB_ERR_AUTH_LOGIN_FAILED');
    }
    const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'root' } });
    t.equal(res.statusCode, 422);
    const browser = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { accept: 'text/html,application/xhtml+xml' },
      payload: { username: 'root', password: 'nope' },
    });
    t.equal(browser.statusCode, 401);
    t.match(browser.headers['content-type'], /text\/html/);
    t.match(browser.body, /Invalid username or password/);
    t.notOk(browser.headers['set-cookie']);
    const good = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'root', password: PASSWORD },
    });
    const value = decodeURIComponent(cookiesOf(good).mcp_gateway_session);
    const [body, sig] = value.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), username: 'mallory' }),
    ).toString('base64url');
    const me = await app.inject({ url: '/api/auth/me', headers: { cookie: `mcp_gateway_session=${forged}.${sig}` } });
    t.equal(me.statusCode, 401);
    t.match(me.json().detail, /Session expired or invalid/);
  });

  t.test('CSRF on cookie-authenticated unsafe requests', async (t) => {
    const login = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'root', password: PASSWORD },
    });
    const c = cookiesOf(login);
    const cookie = `mcp_gateway_session=${c.mcp_gateway_session}`;
    const csrfRes = await app.inject({ url: '/api/auth/csrf', headers: { cookie } });
    t.equal(csrfRes.statusCode, 200);
    const token = csrfRes.json().csrf_token;
    t.equal(decodeURIComponent(c.mcp_gateway_csrf), token, 'the readable cookie carries the same token');
    const form = (extra: string, headers: Record<string, string> = {}) =>
      app.inject({
        method: 'POST',
        url: '/api/tokens/generate',
        headers: { cookie, ...headers },
        payload: JSON.parse(extra),
      });
    t.equal((await form('{}')).statusCode, 403, 'no token');
    t.equal((await form('{}', { 'x-csrf-token': 'wrong' })).statusCode, 403, 'wrong token');
    // A token from another session does not pass.
    const other = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'root', password: PASSWORD },
    });
    const otherToken = decodeURIComponent(cookiesOf(other).mcp_gateway_csrf);
    t.not(otherToken, token);
    t.equal((await form('{}', { 'x-csrf-token': otherToken })).statusCode, 403, 'other session token');
    t.equal((await form('{}', { 'x-csrf-token': token })).statusCode, 200, 'header');
    t.equal(
      (await form(JSON.stringify({ csrf_token: token }))).statusCode,
      422,
      'unknown body fields are refused by the token schema',
    );
    const noSession = await app.inject({ url: '/api/auth/csrf' });
    t.equal(noSession.statusCode, 401);
    // Bearer callers are not asked for a CSRF token.
    const bearer = await app.inject({
      method: 'POST',
      url: '/api/tokens/generate',
      headers: { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}` },
      payload: {},
    });
    t.equal(bearer.statusCode, 200);
  });

  t.test('a form post carries the CSRF token in the csrf_token field', async (t) => {
    const login = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'root', password: PASSWORD },
    });
    const c = cookiesOf(login);
    const cookie = `mcp_gateway_session=${c.mcp_gateway_session}`;
    const token = decodeURIComponent(c.mcp_gateway_csrf);
    const post = (body: string) =>
      app.inject({
        method: 'POST',
        url: '/api/toggle/no-such-server',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: body,
      });
    let res = await post('enabled=true');
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'SB_ERR_AUTH_CSRF');
    res = await post(`enabled=true&csrf_token=${encodeURIComponent(token)}x`);
    t.equal(res.json().code, 'SB_ERR_AUTH_CSRF');
    res = await post(`enabled=true&csrf_token=${encodeURIComponent(token)}`);
    t.not(res.json().code, 'SB_ERR_AUTH_CSRF', 'past the CSRF check (the catalog answers for the missing server)');
    t.not(res.statusCode, 403);
  });

  t.test('logout revokes the session server-side', async (t) => {
    const login = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'root', password: PASSWORD },
    });
    const cookie = `mcp_gateway_session=${cookiesOf(login).mcp_gateway_session}`;
    t.equal((await app.inject({ url: '/api/auth/me', headers: { cookie } })).statusCode, 200);
    const out = await app.inject({ url: '/api/auth/logout', headers: { cookie } });
    t.equal(out.statusCode, 302);
    const again = await app.inject({ url: '/api/auth/me', headers: { cookie } });
    t.equal(again.statusCode, 401, 'a kept copy of the cookie no longer works');
    const v = await app.inject({ url: '/validate', headers: { cookie } });
    t.equal(v.statusCode, 401);
  });

  t.test('logout clears the cookie and redirects to login', async (t) => {
    for (const [method, url, to] of [
      ['GET', '/api/auth/logout', '/api/auth/login'],
      ['POST', '/api/auth/logout', '/api/auth/login'],
      ['POST', '/logout', '/login'],
    ] as const) {
      const res = await app.inject({ method, url });
      t.equal(res.statusCode, 302, url);
      t.equal(res.headers.location, to);
      const raw = (res.headers['set-cookie'] as string[]).find((x) => x.startsWith('mcp_gateway_session='))!;
      t.match(raw, /^mcp_gateway_session=;/);
      t.match(raw, /Max-Age=0/);
    }
  });

  t.test('providers and provider redirects without an IdP', async (t) => {
    const res = await app.inject({ url: '/api/auth/providers' });
    t.equal(res.statusCode, 200);
    t.same(res.json(), { providers: [] });
    for (const url of ['/api/auth/auth/keycloak', '/auth/keycloak']) {
      const r = await app.inject({ url });
      t.equal(r.statusCode, 404, url);
      t.equal(r.json().code, 'SB_ERR_AUTH_PROVIDER_UNKNOWN');
    }
    const cb = await app.inject({ url: '/api/auth/auth/callback?error=access_denied&details=user%20cancelled' });
    t.equal(cb.statusCode, 302);
    t.equal(cb.headers.location, '/api/auth/login?error=access_denied%3A%20user%20cancelled');
  });
});

t.test('adminSession helper', async (t) => {
  const app = await makeApp(t, { registry: { admin_password: PASSWORD } });
  const s = await adminSession(app);
  const res = await app.inject({ method: 'POST', url: '/api/tokens/generate', headers: s.headers, payload: {} });
  t.equal(res.statusCode, 200);
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/tokens/generate', headers: { cookie: s.cookie }, payload: {} }))
      .statusCode,
    403,
  );
});

t.test('secure_cookies marks every auth cookie Secure', async (t) => {
  const app = await makeApp(t, { registry: { admin_password: PASSWORD, secure_cookies: true } });
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username: 'admin', password: PASSWORD },
  });
  const list = res.headers['set-cookie'] as string[];
  t.equal(list.length, 2);
  for (const c of list) t.match(c, /; Secure/);
});

t.test('identity provider redirect', async (t) => {
  const app = await makeApp(t, {
    registry: {
      idp: {
        provider: 'keycloak',
        url: 'http://127.0.0.1:9/',
        realm: 'mcp',
        client_id: 'registry-web',
        client_secret: 's3cret',
      },
    },
  });
  const res = await app.inject({ url: '/api/auth/providers' });
  t.same(res.json(), { providers: [{ name: 'keycloak', display_name: 'Keycloak', icon: 'keycloak' }] });
  t.match(
    (await app.inject({ url: '/login' })).body,
    /<a href="\/api\/auth\/auth\/keycloak">Sign in with Keycloak<\/a>/,
  );
  for (const url of ['/api/auth/auth/keycloak', '/auth/keycloak']) {
    const r = await app.inject({ url, headers: { host: 'registry.test' } });
    t.equal(r.statusCode, 302);
    const loc = new URL(r.headers.location as string);
    t.equal(`${loc.origin}${loc.pathname}`, 'http://127.0.0.1:9/realms/mcp/protocol/openid-connect/auth');
    t.equal(loc.searchParams.get('client_id'), 'registry-web');
    t.equal(loc.searchParams.get('response_type'), 'code');
    t.equal(loc.searchParams.get('redirect_uri'), 'http://registry.test/api/auth/auth/callback');
    t.ok(loc.searchParams.get('state'));
    t.notMatch(r.headers.location as string, /s3cret/);
  }
  t.equal((await app.inject({ url: '/auth/okta' })).statusCode, 404);
  const cb = await app.inject({ url: '/api/auth/auth/callback?code=abc&state=forged' });
  t.equal(cb.statusCode, 302);
  t.match(cb.headers.location, /error=Login%20state%20mismatch/);
});
