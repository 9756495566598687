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

