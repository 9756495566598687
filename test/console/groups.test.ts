import t from 'tap';
import { adminBasic } from '../helpers/registry-auth.ts';
import { startControlledServer } from '../mcp/controlled-server.ts';
import { axeSerious, launchBrowser, loginAsAdmin, newContext, startConsole } from './browser.ts';

/**
 * Issue 20 in real Chromium against the real app: the admin creates a group on the groups page (through
 * /api/internal/create-group with the session cookie and CSRF token), sees it listed, puts a server in it,
 * is refused deleting a system group with the API's own message, and deletes the new group after a confirm;
 * the server detail page shows the health history the registry kept. axe-core finds no serious violation.
 */
t.setTimeout(900_000);

const backend = await startControlledServer({
  tools: [{ name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: {} } }],
});
t.teardown(() => backend.stop());
const { app, base } = await startConsole(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 5 } } });
const reg = await app.inject({
  method: 'POST',
  url: '/api/internal/register',
  headers: adminBasic(app),
  payload: {
    name: 'Echo backend',
    description: 'groups console test',
    path: '/echo-backend',
    proxy_pass_url: backend.base,
  },
});
if (reg.statusCode !== 201) throw new Error(`register: ${reg.statusCode} ${reg.body}`);

const browser = await launchBrowser(t);
const context = await newContext(t, browser, base);
const page = await context.newPage();
const pageErrors: string[] = [];
page.on('pageerror', (e) => pageErrors.push(e.message));

t.test('groups page: create, list, membership, refused system delete, confirmed delete', async (t) => {
  await loginAsAdmin(page, base);
  await page.goto(`${base}/ui/admin/groups`);
  const table = page.getByRole('table', { name: 'Groups' });
  await table.waitFor();
  t.ok(await table.locator('tr[data-group="mcp-registry-admin"]').count(), 'the system groups are listed');

  await page.getByLabel('Group name').fill('console-team');
  await page.getByLabel('Group description').fill('made in the browser');
  await page.getByRole('button', { name: 'Create group' }).click();
  await page.getByText("Group 'console-team' created").waitFor();
  const row = table.locator('tr[data-group="console-team"]');
  await row.waitFor();
  t.match(await row.textContent(), /made in the browser/, 'the new group is listed with its description');
  const created = await app.inject({ url: '/api/internal/list-groups', headers: adminBasic(app) });
  t.ok(
    created.json().groups.some((g: { name: string }) => g.name === 'console-team'),
    'the API has it too',
  );

  // Membership: the server joins the new group.
  await page
    .getByRole('combobox', { name: 'Server', exact: true })
    .selectOption({ label: 'Echo backend (/echo-backend)' });
  await page.getByRole('combobox', { name: 'Target group' }).selectOption('console-team');
  await page.getByRole('button', { name: 'Add to group' }).click();
  await page.getByText('Groups of /echo-backend updated').waitFor();
  const detail = await app.inject({ url: '/api/servers/echo-backend', headers: adminBasic(app) });
  t.same(detail.json().groups, ['console-team'], 'the server is in the group');

  t.same(await axeSerious(page), [], 'groups page: no serious or critical axe violation');

  // A system group: the confirm is accepted, the API refuses, and its message is shown.
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Delete group mcp-registry-admin' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.match(await alert.textContent(), /system group/, `the API's message is shown: ${await alert.textContent()}`);

  // Dismissing the confirm deletes nothing.
  page.once('dialog', (d) => void d.dismiss());
  await page.getByRole('button', { name: 'Delete group console-team' }).click();
  t.equal(await row.count(), 1, 'a dismissed confirm leaves the group');

  // Accepting it deletes the group (it grants a server rule now, so the page sends force and says so).
  let asked = '';
  page.once('dialog', (d) => {
    asked = d.message();
    void d.accept();
  });
  await page.getByRole('button', { name: 'Delete group console-team' }).click();
  await page.getByText("Group 'console-team' deleted").waitFor();
  await row.waitFor({ state: 'detached' });
  t.match(asked, /Delete group 'console-team'/, 'the confirm names the group');
  const after = await app.inject({ url: '/api/internal/list-groups', headers: adminBasic(app) });
  t.notOk(
    after.json().groups.some((g: { name: string }) => g.name === 'console-team'),
    'gone from the API too',
  );
});

t.test('server detail page shows the stored health history', async (t) => {
  // The check a new server gets at once has finished (a refresh during it would join it).
  const samples = async () =>
    (await app.inject({ url: '/api/servers/echo-backend/health/history', headers: adminBasic(app) })).json().samples
      .length as number;
  for (let i = 0; i < 400 && (await samples()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
  // A change of status: the backend fails once, then recovers; each is a stored sample.
  backend.behaviour.failStatus = 500;
  await app.inject({ method: 'POST', url: '/api/servers/echo-backend/refresh', headers: adminBasic(app) });
  backend.behaviour.failStatus = undefined;
  await app.inject({ method: 'POST', url: '/api/servers/echo-backend/refresh', headers: adminBasic(app) });
  const stored = await app.inject({ url: '/api/servers/echo-backend/health/history', headers: adminBasic(app) });
  t.ok(stored.json().samples.length >= 3, `the registry kept the results (${stored.json().samples.length})`);

  await page.goto(`${base}/ui/servers/echo-backend`);
  const list = page.getByRole('list', { name: 'Health history, newest first' });
  await list.waitFor();
  const items = list.getByRole('listitem');
  t.equal(await items.count(), stored.json().samples.length, 'one line per stored sample');
  t.equal(await items.first().getAttribute('data-sample'), 'healthy', 'newest first: healthy again');
  t.equal(await items.nth(1).getAttribute('data-sample'), 'unhealthy', 'before it, the failure');
  t.match(await items.nth(1).textContent(), /status 500/);
  t.same(await axeSerious(page), [], 'detail page: no serious or critical axe violation');
  t.same(pageErrors, [], 'no script error on the pages');
});
