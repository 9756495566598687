import t from 'tap';
import { freePort } from '../fixtures/free-port.ts';
import { startOidcServer } from '../oidc/server.ts';
import {
  ADMIN_PASSWORD,
  axeSerious,
  launchBrowser,
  loginAsAdmin,
  newContext,
  screenshot,
  sessionCookies,
  setTheme,
  startConsole,
} from './browser.ts';

/**
 * Signing in and out of the console in real Chromium: the API's message for a wrong password, the admin
 * login and logout, an expired session sent back to the login page, and "Sign in with <IdP>" through the
 * authorization-code flow with PKCE against oidc-provider.
 */
t.setTimeout(900_000);

t.test('local admin: wrong password, sign in, sign out, expired session', async (t) => {
  const { app, base } = await startConsole(t, { registry: { health: { interval_seconds: 0 } } });
  const browser = await launchBrowser(t);
  const context = await newContext(t, browser, base);
  const page = await context.newPage();

  // A browser asking for the old login URL gets the console's login page.
  await page.goto(`${base}/login`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.same(await axeSerious(page), [], 'login page: no serious or critical axe violation (light)');
  await screenshot(page, 'login');
  await setTheme(page, 'dark');
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.same(await axeSerious(page), [], 'login page: no serious or critical axe violation (dark)');
  await screenshot(page, 'login');
  await setTheme(page, 'light');

  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.equal(await alert.textContent(), 'Invalid username or password', "the API's message is shown");
  t.equal(new URL(page.url()).pathname, '/login', 'still on the login page');
  t.notOk(
    (await context.cookies()).some((c) => c.name === 'mcp_gateway_session'),
    'no session',
  );

  // Where the IdP callback sends a failed login: the login URL with ?error=, shown by the console's page.
  await page.goto(`${base}/api/auth/login?error=${encodeURIComponent('access_denied: the user said no')}`);
  await page.getByRole('alert').waitFor();
  t.equal(await page.getByRole('alert').textContent(), 'access_denied: the user said no', "the IdP's error is shown");

  await loginAsAdmin(page, base, ADMIN_PASSWORD);
  t.equal(new URL(page.url()).pathname, '/ui/servers');
  t.equal(await page.locator('.topbar .user').textContent(), 'admin', 'the top bar names the user');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL('**/ui/login');
  t.notOk(
    (await context.cookies()).some((c) => c.name === 'mcp_gateway_session' && c.value),
    'session cleared',
  );
  await page.goto(`${base}/ui/tokens`);
  await page.waitForURL(/\/ui\/login\?next=/);
  t.pass('a signed-out user asking for a page is sent to the login page');

  // An expired session: valid when the page opened, expired at the next call.
  const short = await newContext(t, browser, base);
  await short.addCookies(
    sessionCookies(app, base, { username: 'admin', groups: ['mcp-registry-admin'], hours: 4 / 3600 }),
  );
  const spage = await short.newPage();
  await spage.goto(`${base}/ui/servers`);
  await spage.getByRole('heading', { name: 'MCP servers' }).waitFor();
  await spage.waitForTimeout(5000);
  await spage.getByRole('link', { name: 'Tokens' }).click();
  await spage.waitForURL(/\/ui\/login\?/);
  t.equal(new URL(spage.url()).searchParams.get('reason'), 'expired');
  await spage.getByText('Your session has ended').waitFor();
  t.pass('an expired session goes back to the login page, which says why');

  // Signing in again returns to the page the user was on.
  await spage.getByLabel('Username').fill('admin');
  await spage.getByLabel('Password').fill(ADMIN_PASSWORD);
  await spage.getByRole('button', { name: 'Sign in' }).click();
  await spage.waitForURL('**/ui/tokens');
  t.pass('back where the user was');
});

t.test('Sign in with the identity provider (authorization code + PKCE) against oidc-provider', async (t) => {
  // The callback URL must be registered with the IdP before the app listens, so the port is chosen first.
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const idp = await startOidcServer({
    clients: {
      'console-web': { secret: 'console-web-secret', redirect_uris: [`${base}/api/auth/auth/callback`] },
    },
    users: { olivia: { preferred_username: 'olivia', groups: ['mcp-registry-admin'] } },
  });
  t.teardown(() => idp.close());
  await startConsole(
    t,
    {
      registry: {
        health: { interval_seconds: 0 },
        idp: {
          provider: 'oidc',
          issuer: idp.issuer,
          client_id: 'console-web',
          client_secret: 'console-web-secret',
        },
      },
    },
    {},
    port,
  );
  const browser = await launchBrowser(t);
  const context = await newContext(t, browser, base);
  const page = await context.newPage();
  const authorizations: URL[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin === idp.origin && u.searchParams.has('response_type')) authorizations.push(u);
  });
  await page.goto(`${base}/ui/`);
  await page.waitForURL(/\/ui\/login/);
  const sso = page.getByRole('link', { name: /^Sign in with / });
  await sso.waitFor();
  t.equal(await sso.textContent(), 'Sign in with OpenID Connect');
  await sso.click();

  // oidc-provider's development pages: a login form, then consent.
  await page.waitForURL((u) => u.origin === idp.origin);
  await page.locator('input[name=login]').fill('olivia');
  await page.locator('input[name=password]').fill('any-password');
  await page.locator('button[type=submit]').first().click();
  await page.waitForLoadState();
  if (new URL(page.url()).origin === idp.origin) await page.locator('button[type=submit]').first().click();

  await page.waitForURL('**/ui/servers');
  await page.locator('.topbar .user').waitFor();
  t.equal(await page.locator('.topbar .user').textContent(), 'olivia', 'signed in as the IdP user');
  const me = await page.evaluate(async () => (await fetch('/api/auth/me')).json());
  t.equal(me.provider, 'oidc');
  t.equal(me.is_admin, true, 'the IdP group maps to the admin scope');
  t.equal(authorizations[0]?.searchParams.get('response_type'), 'code', 'authorization code flow');
  t.equal(authorizations[0]?.searchParams.get('code_challenge_method'), 'S256', 'with PKCE');
});
