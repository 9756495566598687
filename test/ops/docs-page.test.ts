import t from 'tap';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { makeApp } from '../helpers/app.ts';

/**
 * /docs in a real Chromium: Try-it-out calls go out authenticated, with a
 * bearer token typed into the Authorize dialog, and (an unsafe POST) with the
 * session cookie of a /login, the page adding the CSRF header itself.
 */

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const PASSWORD = 'docs-page-test-password';

// Swagger UI parses a document of some 250 operations; on a busy shared two-core machine that alone has taken
// 45 s per page load, so the file and each page wait far longer than they need on an idle one.
t.setTimeout(600_000);
const PAGE_TIMEOUT = 180_000;

if (!existsSync(CHROMIUM)) t.fail(`no Chromium at ${CHROMIUM}: test/setup/install-deps.sh installs Debian chromium`);
else {
  // The registry reads the admin password from the process environment (plugins/registry/auth/keys.ts).
  const before = process.env.ADMIN_PASSWORD;
  process.env.ADMIN_PASSWORD = PASSWORD;
  t.teardown(() => {
    if (before === undefined) delete process.env.ADMIN_PASSWORD;
    else process.env.ADMIN_PASSWORD = before;
  });

  const app = await makeApp(t);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  // close() ends the Chromium process it started (and its children).
  t.teardown(() => browser.close());

  /** On a loaded /docs page: opens one operation (tag, then operation), presses Try it out, optionally sets the body, executes. */
  async function tryItOut(page: Page, tag: string, operationId: string, urlPart: string, body?: string) {
    await page.locator(`#operations-tag-${tag}`).click();
    const op = page.locator(`#operations-${tag}-${operationId}`);
    await op.locator('.opblock-summary-control').first().click();
    await op.locator('.try-out__btn').click();
    if (body !== undefined) await op.locator('textarea.body-param__text').fill(body);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().startsWith(`${base}${urlPart}`) && r.request().method() !== 'OPTIONS'),
      op.locator('.execute').click(),
    ]);
    // What the page itself shows as the live response, not only what went over the wire.
    const shown = (
      await op.locator('.live-responses-table .response .response-col_status').first().textContent()
    )?.trim();
    return { response, shown };
  }

  t.test('GET with a bearer token from the Authorize dialog', async (t) => {
    const minted = await app.inject({
      method: 'POST',
      url: '/api/tokens/generate',
      headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` },
      payload: { expires_in_hours: 1, description: 'docs page test' },
    });
    t.equal(minted.statusCode, 200, minted.statusCode === 200 ? 'minted a token (basic auth)' : minted.body);
    const token = minted.json().access_token as string;

    const context = await browser.newContext();
    context.setDefaultTimeout(PAGE_TIMEOUT);
    t.teardown(() => context.close());
    const page = await context.newPage();
    await page.goto(`${base}/docs/`);
    await page.locator('.btn.authorize').first().click();
    const bearer = page.locator('.auth-container').filter({ hasText: /bearer\s*\(http, Bearer\)/ });
    await bearer.locator('input').fill(token);
    await bearer.locator('button.authorize').click();
    await page.locator('.btn-done').first().click();

    const { response, shown } = await tryItOut(page, 'auth', 'getApiAuthMe', '/api/auth/me');
    t.equal(
      response.request().headers().authorization,
      `Bearer ${token}`,
      'the token went in the Authorization header',
    );
    t.equal(response.status(), 200);
    t.equal((await response.json()).username, 'admin', 'the call ran as the token owner');
    t.equal(shown, '200', 'the docs page shows the 200');
    t.equal((await context.cookies()).length, 0, 'no session cookie: the bearer alone authenticated the call');
  });

  t.test('unsafe POST after a cookie login carries the CSRF token', async (t) => {
    const context = await browser.newContext();
    context.setDefaultTimeout(PAGE_TIMEOUT);
    t.teardown(() => context.close());
    const page = await context.newPage();
    await page.goto(`${base}/login`);
    await page.fill('input[name=username]', 'admin');
    await page.fill('input[name=password]', PASSWORD);
    await Promise.all([
      page.waitForURL((u) => !u.pathname.startsWith('/login')),
      page.locator('form [type=submit], form button').first().click(),
    ]);
    const names = (await context.cookies()).map((c) => c.name);
    t.ok(names.includes('mcp_gateway_session'), 'logged in: the session cookie is set');

    await page.goto(`${base}/docs/`);
    // Without the header the same call is refused: the success below is the page's doing, not a lax check.
    const bare = await page.evaluate(async () => {
      const r = await fetch('/api/tokens/generate', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"expires_in_hours":1}',
      });
      return { status: r.status, code: ((await r.json()) as { code?: string }).code };
    });
    t.same(bare, { status: 403, code: 'SB_ERR_AUTH_CSRF' }, 'a cookie POST without the CSRF header is refused');

    const { response, shown } = await tryItOut(
      page,
      'tokens',
      'postApiTokensGenerate',
      '/api/tokens/generate',
      '{"expires_in_hours": 1, "description": "minted from /docs"}',
    );
    const sent = response.request().headers();
    t.ok(sent['x-csrf-token'], 'the page sent X-CSRF-Token');
    t.notOk(sent.authorization, 'no Authorization header: the cookie authenticated the call');
    const status = response.status();
    t.equal(status, 200, status === 200 ? 'minted through the docs page' : await response.text());
    t.type((await response.json()).access_token, 'string', 'a token was minted');
    t.equal(shown, '200', 'the docs page shows the 200');
  });
}
