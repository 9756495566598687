import t from 'tap';
import { openStore } from '../../core/store.ts';
import { LoginLockout } from '../../plugins/registry/auth/login-lockout.ts';
import { makeApp } from '../helpers/app.ts';

/**
 * Login lockout: the counters on the memory store, then the login form and
 * HTTP Basic through inject() with client addresses set per request.
 */

const PASSWORD = 'lockout-test-password';
const settings = { enabled: true, max_attempts: 3, max_attempts_per_ip: 5, window_s: 60, trusted_proxies: [] };

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code,
  );

t.test('counters: per username+address, per address, window, reset on success', async (t) => {
  const store = await openStore({ backend: 'memory' });
  t.teardown(() => store.close());
  const lock = new LoginLockout(store, settings);
  const now = Date.now();
  for (let i = 0; i < 3; i++) await (await lock.begin('admin', '10.0.0.1', now)).failed();
  const err = await lock.begin('admin', '10.0.0.1', now + 1000).catch((e) => e);
  t.equal(err.statusCode, 429);
  t.equal(err.code, 'SB_ERR_AUTH_LOCKED_OUT');
  t.equal(err.headers['retry-after'], '59', 'Retry-After: until the oldest failure leaves the window');
  t.match(err.detail, /3 failed logins for this username/);
  t.equal(
    await code(lock.begin('admin', '10.0.0.2', now)),
    'ok',
    'the same username from another address is not locked',
  );
  t.equal(await code(lock.begin('admin', '10.0.0.1', now + 60_001)), 'ok', 'unlocked once the window has passed');

  // Two failures, a success, two more: the success cleared the first two.
  for (let i = 0; i < 2; i++) await (await lock.begin('ops', '10.0.0.3', now)).failed();
  await (await lock.begin('ops', '10.0.0.3', now)).succeeded();
  for (let i = 0; i < 2; i++) await (await lock.begin('ops', '10.0.0.3', now)).failed();
  t.equal(await code(lock.begin('ops', '10.0.0.3', now)), 'ok', 'a success resets the username count');

  // Per address, whatever the username: 5 failures with 5 names lock the address for a sixth name.
  for (let i = 0; i < 5; i++) await (await lock.begin(`u${i}`, '10.0.0.4', now)).failed();
  const perIp = await lock.begin('someone-else', '10.0.0.4', now).catch((e) => e);
  t.equal(perIp.code, 'SB_ERR_AUTH_LOCKED_OUT');
  t.match(perIp.detail, /5 failed logins from your address/);

  // Concurrent failures cannot share a slot: 10 at once still lock after exactly 3 were counted.
  const attempts = await Promise.all(Array.from({ length: 10 }, () => lock.begin('burst', '10.0.0.5', now)));
  await Promise.all(attempts.map((a) => a.failed()));
  t.equal(await code(lock.begin('burst', '10.0.0.5', now)), 'SB_ERR_AUTH_LOCKED_OUT');

  const off = new LoginLockout(store, { ...settings, enabled: false });
  t.equal(await code(off.begin('admin', '10.0.0.1', now)), 'ok', 'enabled: false never locks');
});

t.test('the login form and HTTP Basic', async (t) => {
  const app = await makeApp(t, {
    registry: {
      admin_user: 'root',
      admin_password: PASSWORD,
      login_lockout: { max_attempts: 3, max_attempts_per_ip: 6, window_s: 900 },
    },
  });
  const login = (password: string, remoteAddress: string, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'root', password },
      headers,
      remoteAddress,
    });
  const basic = (password: string, remoteAddress: string) =>
    app.inject({
      url: '/api/auth/me',
      headers: { authorization: `Basic ${Buffer.from(`root:${password}`).toString('base64')}` },
      remoteAddress,
    });

  t.test('form: three failures, then 429 even with the right password', async (t) => {
    for (let i = 0; i < 3; i++) t.equal((await login('wrong', '192.0.2.1')).statusCode, 401, `failure ${i + 1} is 401`);
    const locked = await login(PASSWORD, '192.0.2.1');
    t.equal(locked.statusCode, 429);
    t.equal(locked.json().code, 'SB_ERR_AUTH_LOCKED_OUT');
    t.match(locked.json().detail, /try again in \d+ s/);
    t.ok(Number(locked.headers['retry-after']) > 890, 'Retry-After is about the window');
    t.notOk(locked.headers['set-cookie'], 'no session while locked');
    const page = await login(PASSWORD, '192.0.2.1', { accept: 'text/html' });
    t.equal(page.statusCode, 429, 'a browser form post gets the form back with 429');
    t.match(page.body, /role="alert">Login locked/);
    t.equal((await login(PASSWORD, '192.0.2.2')).statusCode, 302, 'the admin signs in from another address');
  });

  t.test('form: a success resets the count', async (t) => {
    for (let i = 0; i < 2; i++) await login('wrong', '192.0.2.10');
    t.equal((await login(PASSWORD, '192.0.2.10')).statusCode, 302);
    for (let i = 0; i < 2; i++) await login('wrong', '192.0.2.10');
    t.equal((await login(PASSWORD, '192.0.2.10')).statusCode, 302, 'two more failures do not lock');
  });

  t.test('Basic counts toward the same lockout', async (t) => {
    t.equal((await basic(PASSWORD, '192.0.2.20')).statusCode, 200, 'Basic works');
    for (let i = 0; i < 3; i++) await basic('wrong', '192.0.2.20');
    const locked = await basic(PASSWORD, '192.0.2.20');
    t.equal(locked.statusCode, 429);
    t.equal(locked.json().code, 'SB_ERR_AUTH_LOCKED_OUT');
    t.ok(locked.headers['retry-after']);
    t.equal((await login(PASSWORD, '192.0.2.20')).statusCode, 429, 'and locks the form for that address');
  });

  t.test('X-Forwarded-For is believed from a trusted proxy only', async (t) => {
    // The default trusted proxies are loopback: nginx on the same host.
    for (let i = 0; i < 3; i++) await login('wrong', '127.0.0.1', { 'x-forwarded-for': 'evil-claim, 198.51.100.1' });
    const viaProxy = await login(PASSWORD, '127.0.0.1', { 'x-forwarded-for': '198.51.100.1' });
    t.equal(viaProxy.statusCode, 429, 'the client behind the proxy is locked');
    const other = await login(PASSWORD, '127.0.0.1', { 'x-forwarded-for': '198.51.100.2' });
    t.equal(other.statusCode, 302, 'another client behind the same proxy is not');
    // A direct client cannot pick its counter by claiming an address.
    for (let i = 0; i < 3; i++) await login('wrong', '203.0.113.9', { 'x-forwarded-for': `203.0.113.${100 + i}` });
    t.equal((await login(PASSWORD, '203.0.113.9', { 'x-forwarded-for': '203.0.113.200' })).statusCode, 429);
  });

  t.test('per address, any username', async (t) => {
    const addr = '192.0.2.30';
    for (let i = 0; i < 6; i++)
      await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: `guess${i}`, password: 'x' },
        remoteAddress: addr,
      });
    const locked = await login(PASSWORD, addr);
    t.equal(locked.statusCode, 429);
    t.match(locked.json().detail, /6 failed logins from your address/);
  });
});

t.test('config: defaults and a bad value', async (t) => {
  const app = await makeApp(t, { registry: { admin_password: PASSWORD } });
  const { registryAuthOf } = await import('../../plugins/registry/auth/index.ts');
  t.same(registryAuthOf(app).settings.login_lockout, {
    enabled: true,
    max_attempts: 5,
    max_attempts_per_ip: 20,
    window_s: 900,
    trusted_proxies: ['127.0.0.1', '::1'],
  });
  await t.rejects(
    makeApp(t, { registry: { login_lockout: { max_attempts: 0 } } }),
    /registry\.login_lockout\.max_attempts/,
  );
});
