import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registryAuthOf } from '../../plugins/registry/auth/index.ts';
import { startEverything } from '../mcp/servers.ts';
import {
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
 * The registry half of the console in real Chromium against the real app: an admin registers a server that
 * points at server-everything and sees its badge turn healthy without a reload (the WebSocket feed); the
 * detail page shows its tools and the client config; a bound token is minted and copied; a server switched
 * off leaves a limited user's view; the register form shows the API's validation message; every page passes
 * axe-core (no serious or critical violation) in both themes.
 */
t.setTimeout(900_000);

const everything = await startEverything('streamableHttp');
t.teardown(() => everything.stop());

// A SKILL.md with everything a sanitiser must remove, served from loopback (allowed for this test's registry).
const skillMd = [
  '---',
  'name: hostile-skill',
  '---',
  '# Hostile skill',
  '',
  '| col | val |',
  '| --- | --- |',
  '| a | b |',
  '',
  '<script>window.__pwned = 1</script>',
  '',
  '<img src="x" onerror="window.__pwned = 2">',
  '',
  '[click me](javascript:window.__pwned=3)',
  '',
  '<iframe src="https://example.com"></iframe>',
  '',
  '<p style="color:red" onclick="window.__pwned=4">styled</p>',
].join('\n');
const skillServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/markdown' }).end(skillMd));
await new Promise<void>((r) => skillServer.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => skillServer.close(() => r())));
const skillUrl = `http://127.0.0.1:${(skillServer.address() as AddressInfo).port}/SKILL.md`;

const { app, base } = await startConsole(t, {
  registry: { health: { interval_seconds: 5 }, allow_private_skill_urls: true },
});
const browser = await launchBrowser(t);
const context = await newContext(t, browser, base);
const page = await context.newPage();
const pageErrors: string[] = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
// The page runs under a strict CSP: anything it refused (an inline style or script) is a bug of the console.
// Except on the hostile skill's page: DOMPurify parses that SKILL.md's raw HTML in an inert document before it
// removes the handlers and styles, and Chromium reports (and blocks) those it meets while parsing; nothing of
// them reaches the page (the skill test checks that nothing ran).
const cspViolations: string[] = [];
page.on('console', (m) => {
  if (!/Content Security Policy/i.test(m.text()) || page.url().endsWith('/ui/skills/hostile-skill')) return;
  cspViolations.push(`${page.url()}: ${m.text().slice(0, 80)}`);
});

t.test('admin registers server-everything and its badge turns healthy without a reload', async (t) => {
  await loginAsAdmin(page, base);
  t.equal(new URL(page.url()).pathname, '/ui/servers', 'the console opens on the servers page');
  await page.getByRole('link', { name: 'Register server' }).click();
  await page.waitForURL('**/ui/servers/new');

  // The API's validation message comes back into the form (a path without the leading slash is fine, so a
  // backend that is not http(s) is what the API refuses here).
  await page.getByLabel('Name', { exact: true }).fill('Everything');
  await page.getByLabel('Path').fill('/everything');
  await page.getByLabel('Description').fill('The MCP reference server');
  await page.getByLabel('Backend URL').fill('ftp://127.0.0.1/nope');
  await page.getByRole('button', { name: 'Register server' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.match(
    await alert.textContent(),
    /proxy_pass_url|http/i,
    `the API's message is shown: ${await alert.textContent()}`,
  );

  await page.getByLabel('Backend URL').fill(everything.url.replace(/\/mcp$/, ''));
  await page.getByLabel('Tags').fill('demo, reference');
  await page.getByRole('button', { name: 'Register server' }).click();
  await page.getByText('Service /everything registered').waitFor();
  const viewsBefore = await page.evaluate(() => performance.getEntriesByType('navigation').length);

  await page.getByRole('link', { name: 'Back to servers' }).click();
  const row = page.locator('tr[data-path="/everything"]');
  await row.waitFor();
  // The first check runs right after registration; the badge changes when the WebSocket says so.
  await row.locator('[data-health="healthy"]').waitFor({ timeout: 120_000 });
  t.pass('the badge says healthy');
  const navigations = await page.evaluate(() => performance.getEntriesByType('navigation').length);
  t.equal(navigations, viewsBefore, 'no page load happened: the console navigated and updated in place');
  t.equal(await page.locator('[data-feed]').textContent(), 'live', 'the health feed is connected');
  t.ok(Number(await row.locator('td.num').textContent()) > 0, 'tool count from the health feed');
});

t.test('search: "/" focuses the box, results are ranked by what servers and their tools do', async (t) => {
  await page.locator('main h1').click();
  await page.keyboard.press('/');
  t.equal(await page.evaluate(() => document.activeElement?.id), 'server-search', '"/" focuses the search box');
  await page.keyboard.type('echo back a message');
  await page.waitForURL(/[?&]q=echo/);
  await page.locator('[data-search-mode]').waitFor();
  const mode = await page.locator('[data-search-mode]').getAttribute('data-search-mode');
  t.ok(mode === 'hybrid' || mode === 'lexical-only', `semantic search answered (${mode})`);
  const row = page.locator('tr[data-path="/everything"]');
  await row.waitFor();
  // Name and description say nothing of echoing: the server is found through its tool.
  t.pass('found by what its tool does');
  t.equal(await page.locator('tr[data-path]').count(), 1, 'only the matching server');
  await page.locator('#server-search').fill('');
  await page.waitForURL((u) => !u.searchParams.has('q'));
  await row.waitFor();
});

t.test('server detail: tools with schemas, health, and the MCP client config to copy', async (t) => {
  await page.locator('tr[data-path="/everything"] a').first().click();
  await page.waitForURL('**/ui/servers/everything');
  await page.getByRole('heading', { name: /^Tools \(\d+\)/ }).waitFor();
  const tools = await page.locator('details.tool').count();
  t.ok(tools > 3, `${tools} tools listed`);
  await page.locator('details.tool summary').first().click();
  t.match(await page.locator('details.tool[open] pre').textContent(), /"type"/, 'a tool shows its input schema');
  await page.getByRole('button', { name: 'Copy MCP client config' }).click();
  const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  t.equal(copied.mcpServers.everything.url, `${base}/everything/mcp`, 'the config points at the gateway');
});

t.test('mint a token bound to the server and copy it', async (t) => {
  await page.getByRole('link', { name: 'Tokens' }).click();
  await page.waitForURL('**/ui/tokens');
  await page.getByLabel('Expires in (hours, 1 to 24)').fill('2');
  await page.getByLabel('Description').fill('console test');
  await page.getByLabel('Resource type').selectOption('server');
  await page.getByLabel('Resource id').fill('everything');
  await page.getByRole('button', { name: 'Mint token' }).click();
  const shown = (await page.locator('[data-token]').textContent()) ?? '';
  t.match(shown, /^ey[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT is shown once');
  await page.getByRole('button', { name: 'Copy token' }).click();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), shown, 'the copy button copied it');
  const me = await app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${shown}` } });
  t.equal(me.statusCode, 200);
  t.same(me.json().resource, { type: 'server', id: 'everything' }, 'the token is bound to the server');
});

t.test("a server switched off leaves a limited user's view", async (t) => {
  // A group whose members may list and use /everything, but not switch it.
  await registryAuthOf(app).scopes.put({
    _id: 'console-viewers',
    group_mappings: ['console-viewers'],
    server_access: [{ server: 'everything', methods: ['all'], tools: ['all'] }] as never,
    ui_permissions: { list_service: ['everything'] },
  });
  const viewer = await newContext(t, browser, base);
  await viewer.addCookies(sessionCookies(app, base, { username: 'vera', groups: ['console-viewers'] }));
  const vpage = await viewer.newPage();
  await vpage.goto(`${base}/ui/servers`);
  const vrow = vpage.locator('tr[data-path="/everything"]');
  await vrow.waitFor();
  t.ok(await vrow.locator('input[type=checkbox]').isDisabled(), 'the limited user cannot switch it');
  t.notOk(await vpage.getByRole('link', { name: 'Register server' }).count(), 'nor register servers');
  t.notOk(await vpage.getByRole('link', { name: 'Groups & scopes' }).count(), 'no Admin entry for a non-admin');
  t.equal(await vpage.locator('.topbar .user').textContent(), 'vera');

  // The admin switches it off in their console.
  await page.getByRole('link', { name: 'Servers' }).click();
  const toggle = page.locator('tr[data-path="/everything"] input[type=checkbox]');
  await toggle.waitFor();
  t.ok(await toggle.isChecked());
  await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/api/toggle/everything') && r.status() === 200),
    toggle.click(),
  ]);
  // The page sets the box from the response after Playwright has seen it: wait for that render (a loaded machine
  // read the box between the two), then check it.
  await page.waitForFunction(
    () => !(document.querySelector('tr[data-path="/everything"] input[type=checkbox]') as HTMLInputElement).checked,
    undefined,
    { timeout: 10_000 },
  );
  t.notOk(await toggle.isChecked(), 'switched off');
  t.equal(
    (await app.inject({ url: '/api/servers/everything', headers: { authorization: `Basic ${adminB64()}` } })).json()
      .is_enabled,
    false,
    'through the API',
  );

  await vpage.reload();
  await vpage.getByText(/\d+ of \d+ shown/).waitFor();
  t.equal(await vpage.locator('tr[data-path="/everything"]').count(), 0, 'gone from the limited user’s list');
  // The admin still sees it (and can switch it back on).
  t.equal(await page.locator('tr[data-path="/everything"]').count(), 1);
  await toggle.click();
  await page.waitForFunction(() =>
    Boolean(document.querySelector<HTMLInputElement>('tr[data-path="/everything"] input[type=checkbox]')?.checked),
  );
});

function adminB64(): string {
  const { username, password } = registryAuthOf(app).authenticator.admin;
  return Buffer.from(`${username}:${password}`).toString('base64');
}

t.test('a skill page renders SKILL.md as sanitised Markdown', async (t) => {
  const reg = await app.inject({
    method: 'POST',
    url: '/api/skills',
    headers: { authorization: `Basic ${adminB64()}`, 'content-type': 'application/json' },
    payload: { name: 'hostile-skill', description: 'Tries every trick', skill_md_url: skillUrl },
  });
  t.equal(reg.statusCode, 201, reg.body);
  await page.goto(`${base}/ui/skills`);
  await page.getByRole('link', { name: 'hostile-skill' }).click();
  await page.waitForURL('**/ui/skills/hostile-skill');
  const md = page.locator('article.markdown');
  await md.locator('h3').waitFor();
  t.equal(await md.locator('h3').textContent(), 'Hostile skill', 'Markdown rendered (headings under the page’s own)');
  t.equal(await md.locator('table td').count(), 2, 'GFM table rendered');
  t.equal(
    await md.locator('script, iframe, [onerror], [onclick], [style]').count(),
    0,
    'no script, frame, handler or style',
  );
  const href = await md.locator('a', { hasText: 'click me' }).getAttribute('href');
  t.notMatch(href ?? '', /javascript:/i, 'no javascript: link');
  await md
    .locator('a', { hasText: 'click me' })
    .click()
    .catch(() => undefined);
  t.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, 'nothing ran');
});

t.test('edit form: validation message from the API, write-only credential', async (t) => {
  await page.goto(`${base}/ui/servers/everything`);
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.waitForURL('**/ui/edit/everything');
  await page.getByLabel('Description').fill('Edited in the console');
  await page.getByLabel('Backend URL').fill('not a url');
  await page.getByRole('button', { name: 'Save changes' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.match(await alert.textContent(), /proxy_pass_url/i, `the API's message: ${await alert.textContent()}`);
  await page.getByLabel('Backend URL').fill(everything.url.replace(/\/mcp$/, ''));
  await page.getByLabel('Scheme').selectOption('bearer');
  const secret = 'console-secret-token-value';
  await page.getByLabel('New credential').fill(secret);
  t.equal(await page.getByLabel('New credential').getAttribute('type'), 'password', 'typed unseen');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL('**/ui/servers/everything');
  await page.getByText('Edited in the console').waitFor();
  t.match(await page.locator('dl.facts').first().textContent(), /bearer \(stored encrypted\)/);
  t.notOk((await page.content()).includes(secret), 'the credential is not on the page');
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.waitForURL('**/ui/edit/everything');
  t.equal(await page.getByLabel('New credential').inputValue(), '', 'the edit form never shows the stored credential');
  await page.getByText('Write-only: a credential is stored').waitFor();
  const api = await app.inject({ url: '/api/servers/everything', headers: { authorization: `Basic ${adminB64()}` } });
  t.equal(api.json().auth_credential_encrypted, true);
  t.notOk(api.body.includes(secret), 'nor in the API answer');
});

t.test('agents list and an agent card', async (t) => {
  const reg = await app.inject({
    method: 'POST',
    url: '/api/agents/register',
    headers: { authorization: `Basic ${adminB64()}`, 'content-type': 'application/json' },
    payload: {
      name: 'code-reviewer',
      description: 'Reviews pull requests',
      url: 'https://agents.example/code-reviewer',
      version: '1.2.0',
      path: '/code-reviewer',
      security_schemes: { bearer: { type: 'bearer' } },
      skills: [{ name: 'review code', description: 'Reads a diff and comments', tags: ['python'] }],
    },
  });
  t.equal(reg.statusCode, 201, reg.body);
  await page.goto(`${base}/ui/agents`);
  await page.getByRole('link', { name: 'code-reviewer' }).click();
  await page.waitForURL('**/ui/agents/code-reviewer');
  await page.getByRole('cell', { name: 'review code' }).waitFor();
  t.match(await page.locator('pre').textContent(), /"url": "https:\/\/agents.example\/code-reviewer"/, 'the card');
});

t.test('every registry page passes axe-core in light and dark', async (t) => {
  const pages = [
    ['/ui/servers', 'servers'],
    ['/ui/servers/everything', 'server-detail'],
    ['/ui/servers/new', 'register'],
    ['/ui/edit/everything', 'edit'],
    ['/ui/agents', 'agents'],
    ['/ui/agents/code-reviewer', 'agent-detail'],
    ['/ui/skills', 'skills'],
    ['/ui/skills/hostile-skill', 'skill-detail'],
    ['/ui/tokens', 'tokens'],
    ['/ui/admin/groups', 'groups'],
  ];
  for (const theme of ['light', 'dark'] as const) {
    await page.goto(`${base}/ui/servers`);
    await setTheme(page, theme);
    for (const [url, name] of pages) {
      await page.goto(`${base}${url}`);
      await page.locator('main h1').waitFor();
      // Wait for the page's data, not only its frame.
      await page.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
      const bad = await axeSerious(page);
      t.same(bad, [], `${url} (${theme}): no serious or critical axe violation`);
      await screenshot(page, name);
    }
  }
  t.same(pageErrors, [], 'no uncaught error in the pages');
  t.same(cspViolations, [], 'nothing the console did was refused by its CSP');

  // The theme toggle switches and the choice survives a reload.
  const before = await page.evaluate(() => document.documentElement.dataset.theme);
  await page.getByRole('button', { name: /Switch to (light|dark) theme/ }).click();
  const after = await page.evaluate(() => document.documentElement.dataset.theme);
  t.not(after, before, 'the toggle switched the theme');
  await page.reload();
  await page.locator('main h1').waitFor();
  t.equal(await page.evaluate(() => document.documentElement.dataset.theme), after, 'remembered across a reload');
});
