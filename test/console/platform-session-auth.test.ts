import t from 'tap';
import { caller, makeApp } from '../helpers/app.ts';
import { adminSession, userSession } from '../helpers/registry-auth.ts';
import { ALICE_BOB_ROOT, apiKeyUsers, keyHeader } from '../fixtures/api-key-users.ts';

/**
 * The console calls the public /api/v1 with the registry session cookie it signed in with
 * (plugins/platform/session-principal.ts), also when the platform auth backend is api_key or jwt.
 */
t.test('the registry session cookie signs in to /api/v1 when the backend has no credential', async (t) => {
  const app = await makeApp(t, {
    ...apiKeyUsers(ALICE_BOB_ROOT),
    registry: { admin_user: 'root-admin', admin_password: 'console-session-password' },
  });
  const as = caller(t, app);
  await as().get('/api/v1/auth/whoami', 401, 'no credential: 401');

  const s = await adminSession(app);
  const who = await app.inject({ url: '/api/v1/auth/whoami', headers: { cookie: s.cookie } });
  t.equal(who.statusCode, 200);
  t.match(who.json(), { id: 'root-admin', type: 'user', is_admin: true }, 'the session user, admin as on the registry');

  const create = (headers: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/api/v1/agents', headers, payload: { name: 'console-made', model: 'm' } });
  const noCsrf = await create({ cookie: s.cookie });
  t.equal(noCsrf.statusCode, 403, 'an unsafe request without the CSRF token is refused');
  t.equal(noCsrf.json().code, 'SB_ERR_AUTH_CSRF');
  t.match(noCsrf.json().detail, /x-csrf-token/);
  t.equal((await create({ cookie: s.cookie, 'x-csrf-token': 'wrong' })).statusCode, 403, 'a wrong token too');
  const made = await create(s.headers);
  t.equal(made.statusCode, 201, 'cookie + CSRF header creates');
  t.equal(made.json().owner_id, 'root-admin', 'owned by the session user');

  await as({ cookie: 'mcp_gateway_session=forged.sig' }).get('/api/v1/agents', 401, 'a forged cookie is no credential');

  // A key the backend knows wins over the cookie: the principal is the key's.
  const both = await app.inject({ url: '/api/v1/auth/whoami', headers: { cookie: s.cookie, ...keyHeader('alice') } });
  t.equal(both.json().id, 'alice');
  // A refused key beside a genuine cookie stays refused: the cookie does not rescue it.
  const bad = await app.inject({
    url: '/api/v1/auth/whoami',
    headers: { cookie: s.cookie, authorization: 'Bearer not-a-key-0000' },
  });
  t.equal(bad.statusCode, 401, 'a bad bearer beside the cookie is a 401');

  // Logout revokes the session on /api/v1 too.
  const out = await app.inject({ method: 'POST', url: '/api/auth/logout', headers: s.headers });
  t.ok(out.statusCode < 400, `logout answered ${out.statusCode}`);
  await as({ cookie: s.cookie }).get('/api/v1/auth/whoami', 401);
});

t.test('a signed-in user who is not a registry admin is a plain platform user: own agents only', async (t) => {
  const app = await makeApp(t, apiKeyUsers(ALICE_BOB_ROOT));
  const as = caller(t, app);
  const { headers } = userSession(app, { username: 'limited' });
  const who = (await app.inject({ url: '/api/v1/auth/whoami', headers })).json();
  t.match(who, { id: 'limited', is_admin: false });
  const root = keyHeader('root');
  await as(root).post('/api/v1/agents', { name: 'private', model: 'm' }, 201);
  t.equal((await app.inject({ url: '/api/v1/agents', headers })).json().total, 0, "another user's agent is not listed");
  await as(headers).get('/api/v1/agents/private', 403, 'nor readable');
  const own = await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers,
    payload: { name: 'mine', model: 'm' },
  });
  t.equal(own.statusCode, 201);
  t.equal(own.json().owner_id, 'limited');
});

t.test('a platform-only process has no session to trust', async (t) => {
  const app = await makeApp(t, apiKeyUsers(ALICE_BOB_ROOT), { surfaces: ['platform'] });
  const res = await app.inject({ url: '/api/v1/auth/whoami', headers: { cookie: 'mcp_gateway_session=x.y' } });
  t.equal(res.statusCode, 401);
});
