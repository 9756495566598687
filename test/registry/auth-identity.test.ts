import t from 'tap';
import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeApp, tempDir } from '../helpers/app.ts';
import { registryAuthOf } from '../../plugins/registry/auth/index.ts';
import { mintToken } from '../helpers/registry-auth.ts';

t.test('admin password is generated under DATA_DIR with mode 0600 and kept across restarts', async (t) => {
  const dir = tempDir();
  const env = { DATA_DIR: dir, ADMIN_PASSWORD: '', SECRET_KEY: '' };
  const a = await makeApp(t, {}, { env });
  const file = join(dir, 'admin_password');
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.equal(statSync(join(dir, 'secret_key')).mode & 0o777, 0o600);
  const password = readFileSync(file, 'utf8').trim();
  t.ok(password.length >= 20, 'a long random password');
  t.not(password, 'admin');
  t.equal(registryAuthOf(a).authenticator.admin.password, password);
  await a.close();
  const b = await makeApp(t, {}, { env });
  t.equal(registryAuthOf(b).authenticator.admin.password, password, 'same password after restart');
  // The token minted by the first process still verifies in the second (same SECRET_KEY file).
  const token = await mintToken(a, { username: 'alice', scopes: ['mcp-registry-user'] });
  const me = await b.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });
  t.not(me.statusCode, 401);
});

t.test('the onRequest hook: public routes ignore bad credentials, protected ones explain them', async (t) => {
  const app = await makeApp(t, { registry: { admin_user: 'boss', admin_password: 'hook-test-password' } });
  let res = await app.inject({ url: '/api/auth/providers', headers: { authorization: 'Bearer garbage' } });
  t.equal(res.statusCode, 200, 'a public route still answers');
  res = await app.inject({ url: '/api/auth/me', headers: { authorization: 'Bearer garbage' } });
  t.equal(res.statusCode, 401);
  t.equal(res.json().detail, 'Invalid token: not a JWT');
  t.equal(res.headers['www-authenticate'], 'Bearer');

  const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
  res = await app.inject({ url: '/api/auth/me', headers: basic('boss', 'hook-test-password') });
  t.equal(res.statusCode, 200);
  t.equal(res.json().username, 'boss');
  t.equal(res.json().auth_method, 'basic');
  t.equal(res.json().is_admin, true);
  for (const [u, p] of [
    ['admin', 'hook-test-password'],
    ['boss', 'wrong'],
    ['boss', ''],
  ]) {
    res = await app.inject({ url: '/api/auth/me', headers: basic(u, p) });
    t.equal(res.statusCode, 401, `${u}:${p}`);
  }

  // A bound token is refused by the hook itself on routes outside its resource; public routes ignore it
  // (they answer the same without it, so refusing would protect nothing).
  const bound = await mintToken(app, {
    username: 'b',
    scopes: ['mcp-registry-admin'],
    resource: { type: 'server', id: 'one' },
  });
  res = await app.inject({ url: '/api/auth/logout', headers: { authorization: `Bearer ${bound}` } });
  t.equal(res.statusCode, 403);
  t.equal(res.json().code, 'SB_ERR_TOKEN_RESOURCE_BOUND');
  res = await app.inject({ url: '/api/auth/providers', headers: { authorization: `Bearer ${bound}` } });
  t.equal(res.statusCode, 200);
  res = await app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${bound}` } });
  t.equal(res.statusCode, 200);

  // Routes outside the registry surface (ops) are not judged by registry auth.
  res = await app.inject({ url: '/healthz', headers: { authorization: `Bearer ${bound}` } });
  t.equal(res.statusCode, 200);
});
