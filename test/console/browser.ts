/**
 * Shared by the console's browser tests (test/console/*.test.ts): start the app on a loopback port, launch
 * the machine's Chromium (the binary the chromium provider finds), sign in, run axe-core on a page, and
 * write screenshots when UPDATE_SCREENSHOTS=1.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { BuildOptions } from '../../plugins/app.ts';
import { registryAuthOf } from '../../plugins/registry/auth/index.ts';
import { CSRF_COOKIE, SESSION_COOKIE, csrfTokenFor, signSession } from '../../plugins/registry/auth/session.ts';
import { findChromium } from '../../providers/chromium/options.ts';
import { makeApp } from '../helpers/app.ts';

/** The admin password the console tests sign in with (the registry reads it from the environment). */
export const ADMIN_PASSWORD = 'console-test-password';

/** A loaded two-core machine: pages wait long, which costs nothing when they are quick. */
export const PAGE_TIMEOUT = 120_000;

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

type Teardown = { teardown: (fn: () => unknown) => void };

export interface Console {
  app: FastifyInstance;
  /** http://127.0.0.1:<port> */
  base: string;
}

/** The app (test/helpers/app.ts) listening on 127.0.0.1, with the console tests' admin password. */
export async function startConsole(
  t: Teardown,
  config: Record<string, unknown> = {},
  opts: BuildOptions = {},
  /** A port chosen beforehand (an IdP must know the callback URL before the app listens); default any. */
  port = 0,
): Promise<Console> {
  const before = process.env.ADMIN_PASSWORD;
  process.env.ADMIN_PASSWORD = ADMIN_PASSWORD;
  t.teardown(() => {
    if (before === undefined) delete process.env.ADMIN_PASSWORD;
    else process.env.ADMIN_PASSWORD = before;
  });
  const app = await makeApp(t, config, opts);
  await app.listen({ host: '127.0.0.1', port });
  const address = app.server.address();
  return { app, base: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}` };
}

/** The machine's Chromium, or undefined (the caller fails the test with a message naming the fix). */
export function chromiumPath(): string | undefined {
  return findChromium();
}

/** Launch headless Chromium; closed (with its child processes) by the teardown. */
export async function launchBrowser(t: Teardown): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath)
    throw new Error('no Chromium found: test/setup/install-deps.sh installs Debian chromium (or set CHROMIUM_PATH)');
  const browser = await chromium.launch({ executablePath, args: ARGS, headless: true });
  t.teardown(() => browser.close());
  return browser;
}

/** A fresh context (its own cookies) with clipboard access for copy buttons and long timeouts. */
export async function newContext(t: Teardown, browser: Browser, base: string): Promise<BrowserContext> {
  const context = await browser.newContext({
    baseURL: base,
    viewport: { width: 1360, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  context.setDefaultTimeout(PAGE_TIMEOUT);
  t.teardown(() => context.close());
  return context;
}

/** Sign in through the console's login form as the local admin; resolves on the first console page. */
export async function loginAsAdmin(page: Page, base: string, password = ADMIN_PASSWORD): Promise<void> {
  await page.goto(`${base}/ui/login`);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(password);
  await Promise.all([
    // Past /ui/ itself too, which the app replaces with its first page at once.
    page.waitForURL(
      (u) => u.pathname.startsWith('/ui/') && u.pathname !== '/ui/' && !u.pathname.startsWith('/ui/login'),
    ),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
}

/**
 * A signed session for a user the IdP would have sent (username, groups), as cookies for a browser
 * context: the same cookie POST /api/auth/login sets, signed with the app's real key. For users that only
 * an identity provider could log in (a limited user), without running one.
 */
export function sessionCookies(
  app: FastifyInstance,
  base: string,
  user: { username: string; groups: string[]; hours?: number },
): Array<{ name: string; value: string; url: string }> {
  const auth = registryAuthOf(app);
  const key = auth.authenticator.secretKey;
  const { value, payload } = signSession(
    key,
    {
      username: user.username,
      groups: user.groups,
      scopes: auth.scopes.scopesForGroups(user.groups),
      provider: 'oidc',
    },
    user.hours ?? 1,
  );
  return [
    { name: SESSION_COOKIE, value: encodeURIComponent(value), url: base },
    { name: CSRF_COOKIE, value: encodeURIComponent(csrfTokenFor(key, payload.sid)), url: base },
  ];
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/**
 * axe-core on the page as it is now; returns the serious and critical violations. Injected with evaluate
 * (DevTools), which the console's CSP (no inline scripts) does not block, unlike a <script> tag.
 */
export async function axeSerious(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE);
  const violations = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: Document, opts: unknown) => Promise<unknown> } }).axe;
    const r = (await axe.run(document, { resultTypes: ['violations'] })) as { violations: AxeViolation[] };
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })),
    }));
  })) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export const SCREENSHOTS = resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots');

/** Writes docs/screenshots/<name>-<theme>.png, only when UPDATE_SCREENSHOTS=1 (CI leaves the tree clean). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const theme = await page.evaluate(() => document.documentElement.dataset.theme ?? 'light');
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-${theme}.png`) });
}

/** Switch the console's theme (the stored choice the theme toggle writes) and reload. */
export async function setTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  await page.evaluate((t) => localStorage.setItem('sb-theme', t), theme);
  await page.reload();
}
