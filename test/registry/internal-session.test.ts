import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { adminBasic, adminSession } from '../helpers/registry-auth.ts';
import { registryAuthOf } from '../../plugins/registry/auth/index.ts';
import { csrfTokenFor, signSession } from '../../plugins/registry/auth/session.ts';

/**
 * /api/internal/* takes the signed-in admin's session cookie (with the CSRF token on unsafe methods) as well as
 * HTTP Basic, so the console can manage groups (issue 20). A non-admin session is refused with 403; Basic is
 * unchanged; a bearer token is still refused.
 */
t.test('internal admin endpoints: admin session + CSRF, non-admin session, Basic', async (t) => {
  const app = await makeApp(t, { registry: { admin_user: 'root', admin_password: 'internal-session-pw' } });
  const admin = await adminSession(app);

  // Admin cookie + CSRF: create, list, delete.
  const created = await app.inject({
    method: 'POST',
    url: '/api/internal/create-group',
    headers: admin.headers,
    payload: { group_name: 'console-made', description: 'from the console' },
  });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.json().group.name, 'console-made');
  const listed = await app.inject({ url: '/api/internal/list-groups', headers: { cookie: admin.cookie } });
  t.equal(listed.statusCode, 200, 'a GET needs no CSRF token');
  t.ok(
    listed.json().groups.some((g: { name: string }) => g.name === 'console-made'),
    'the new group is listed',
  );

  // Missing CSRF token: 403 naming the check, and nothing is created.
  const noCsrf = await app.inject({
    method: 'POST',
    url: '/api/internal/create-group',
    headers: { cookie: admin.cookie },
    payload: { group_name: 'forged-group' },
  });
  t.equal(noCsrf.statusCode, 403);
  t.equal(noCsrf.json().code, 'SB_ERR_AUTH_CSRF');
  const wrongCsrf = await app.inject({
    method: 'POST',
    url: '/api/internal/delete-group',
    headers: { cookie: admin.cookie, 'x-csrf-token': 'not-the-token' },
    payload: { group_name: 'console-made' },
  });
  t.equal(wrongCsrf.statusCode, 403, 'a wrong token is refused too');
  const after = await app.inject({ url: '/api/internal/list-groups', headers: adminBasic(app) });
  const names = after.json().groups.map((g: { name: string }) => g.name);
  t.notOk(names.includes('forged-group'), 'the forged create did nothing');
  t.ok(names.includes('console-made'), 'the forged delete did nothing');

  // A system group cannot be deleted, and the message says why (the console shows it).
  const system = await app.inject({
    method: 'POST',
    url: '/api/internal/delete-group',
    headers: admin.headers,
    payload: { group_name: 'mcp-registry-admin' },
  });
  t.equal(system.statusCode, 403);
  t.equal(system.json().code, 'SB_ERR_GROUP_SYSTEM');
  t.match(system.json().detail, /system group/);

  // Server membership through the session.
  const reg = await app.inject({
    method: 'POST',
    url: '/api/internal/register',
    headers: admin.headers,
    payload: {
      name: 'Grouped',
      description: 'a grouped server',
      path: '/grouped',
      proxy_pass_url: 'http://127.0.0.1:9/mcp',
    },
  });
  t.equal(reg.statusCode, 201, reg.body);
  const add = await app.inject({
    method: 'POST',
    url: '/api/internal/add-to-groups',
    headers: admin.headers,
    payload: { server_name: 'Grouped', group_names: 'console-made' },
  });
  t.equal(add.statusCode, 200, add.body);
  t.same(add.json().groups, ['console-made']);

  const deleted = await app.inject({
    method: 'POST',
    url: '/api/internal/delete-group',
    headers: admin.headers,
    payload: { group_name: 'console-made', force: true },
  });
  t.equal(deleted.statusCode, 200, deleted.body);

  // A non-admin session: 403 (not a Basic challenge), even with a valid CSRF token.
  const key = registryAuthOf(app).authenticator.secretKey;
  const { value, payload } = signSession(
    key,
    { username: 'viewer', groups: [], scopes: ['mcp-registry-user'], provider: 'local' },
    1,
  );
  const user = { cookie: `mcp_gateway_session=${value}`, 'x-csrf-token': csrfTokenFor(key, payload.sid) };
  for (const [method, url, body] of [
    ['GET', '/api/internal/list-groups', undefined],
    ['GET', '/api/internal/list', undefined],
    ['POST', '/api/internal/create-group', { group_name: 'sneaky' }],
    ['POST', '/api/internal/delete-group', { group_name: 'mcp-registry-user' }],
  ] as const) {
    const res = await app.inject({ method, url, headers: user, ...(body ? { payload: body } : {}) });
    t.equal(res.statusCode, 403, `${method} ${url} as a non-admin session`);
    t.equal(res.json().code, 'SB_ERR_AUTH_ADMIN_REQUIRED');
    t.same(Object.keys(res.json()).sort(), ['code', 'detail']);
  }

  // Basic is unchanged: no CSRF token needed, and still the way scripts work.
  const basic = await app.inject({
    method: 'POST',
    url: '/api/internal/create-group',
    headers: adminBasic(app),
    payload: { group_name: 'scripted' },
  });
  t.equal(basic.statusCode, 201, basic.body);
  const badBasic = await app.inject({
    url: '/api/internal/list-groups',
    headers: { authorization: `Basic ${Buffer.from('root:wrong').toString('base64')}` },
  });
  t.equal(badBasic.statusCode, 401);
  t.equal(badBasic.json().code, 'SB_ERR_AUTH_BASIC_REQUIRED');
  t.match(badBasic.headers['www-authenticate'], /^Basic realm="mcp-registry"/);

  // No credentials at all: the Basic challenge as before.
  const none = await app.inject({ url: '/api/internal/list-groups' });
  t.equal(none.statusCode, 401);
  t.equal(none.json().code, 'SB_ERR_AUTH_BASIC_REQUIRED');
});
