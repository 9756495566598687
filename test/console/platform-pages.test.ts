import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import {
  axeSerious,
  chromiumPath,
  launchBrowser,
  loginAsAdmin,
  newContext,
  screenshot,
  startConsole,
} from './browser.ts';
import { ALICE_BOB_ROOT, apiKeyUsers, keyHeader } from '../fixtures/api-key-users.ts';

/**
 * The console's platform pages in real Chromium against a real app on a loopback port: an agent created in the
 * editor (API validation shown at the field), a chat with streamed tokens and a tool call that is reloaded
 * mid-stream and resumes, memory search, traces (the agent's own and one with a timed generation), sessions,
 * providers; axe-core on every page in both themes. UPDATE_SCREENSHOTS=1 writes docs/screenshots/platform-*.png.
 */
t.setTimeout(900_000);

/** Long enough, at 8 characters per chunk and CHUNK_MS apart, that a reload lands while it streams. */
const ANSWER =
  'I stored that fact in memory under the key sky. From now on, when you ask me about the colour of the sky, I will look it up ' +
  'instead of guessing, and I will tell you exactly what you told me. Memory keeps it across sessions, so a new chat with me ' +
  'can find it too. Anything else you want me to keep?';
const CHUNK_MS = 300;

/** axe-core on the current page in both themes (only serious and critical violations fail); screenshots too. */
async function checkPage(t: Test, page: Page, name: string): Promise<void> {
  for (const theme of ['light', 'dark'] as const) {
    await page.evaluate((th) => {
      document.documentElement.dataset.theme = th;
    }, theme);
    const violations = await axeSerious(page);
    t.same(
      violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`),
      [],
      `axe: no serious or critical violations on ${name} (${theme})`,
    );
    await screenshot(page, `platform-${name}`);
  }
  await page.evaluate(() => {
    document.documentElement.dataset.theme = 'light';
  });
}

if (!chromiumPath()) {
  t.fail('no Chromium on this machine: test/setup/install-deps.sh installs it (or set CHROMIUM_PATH)');
} else {
  t.test('platform pages', async (t) => {
    const { app, base } = await startConsole(t, {
      providers: {
        llm: {
          default: 'scripted',
          instances: {
            scripted: {
              type: 'scripted',
              options: {
                chunk_delay_ms: CHUNK_MS,
                responses: [
                  {
                    match: 'remember (.+)',
                    turns: [
                      { tool_calls: [{ name: 'remember', input: { key: 'sky', content: '{{user}}' } }] },
                      { content: ANSWER },
                    ],
                  },
                  { match: 'tell me a story', content: `Once upon a time. ${ANSWER}` },
                  { match: 'count slowly', content: `Counting: ${ANSWER}` },
                  { content: 'Hello from the script.' },
                ],
              },
            },
          },
        },
      },
    });
    const browser = await launchBrowser(t);
    const context = await newContext(t, browser, base);
    // Shorter than the helper's default: when one step fails, the ones after it fail quickly instead of each
    // waiting two minutes for something that will not come.
    context.setDefaultTimeout(45_000);
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(String(err)));

    const text = (sel: string) => page.locator(sel).innerText();

    t.test('sign in', async (t) => {
      await loginAsAdmin(page, base);
      t.pass('signed in as the local admin');
    });

    t.test('create an agent: the API message shows at the field, then it saves', async (t) => {
      await page.goto(`${base}/ui/platform/agents`);
      await page.getByRole('link', { name: 'New agent' }).first().click();
      await page.waitForURL(/\/ui\/platform\/new-agent$/);
      await page.getByLabel('Name').fill('helper');
      await page.getByLabel('Description').fill('Remembers facts');
      await page.getByRole('button', { name: 'Create agent' }).click();
      const modelError = page.locator('#pf-spec-model-error');
      await modelError.waitFor();
      t.match(await modelError.innerText(), /fewer than 1 character|must/i, 'empty model: the message is at the field');
      t.equal(await page.getByLabel('Model').getAttribute('aria-invalid'), 'true');
      await checkPage(t, page, 'agent-new-invalid');

      await page.getByLabel('Model').fill('scripted');
      await page.getByLabel('memory', { exact: true }).check();
      await page.getByRole('button', { name: 'Create agent' }).click();
      await page.waitForURL(/\/ui\/platform\/agents\/helper/);
      await page.getByText("Created agent 'helper'.").waitFor();
      const spec = (await app.inject({ url: '/api/v1/agents/helper' })).json();
      t.match(spec, { model: 'scripted', description: 'Remembers facts', primitives: { memory: { enabled: true } } });

      // The JSON view edits the same spec; its errors go on top.
      // Keyboard: the selected tab is the one tab stop; the arrow key moves to the JSON view.
      await page.getByRole('tab', { name: 'Form' }).focus();
      await page.keyboard.press('ArrowRight');
      await page.getByRole('tab', { name: 'JSON', selected: true }).waitFor();
      await page.waitForFunction(() => document.activeElement?.id === 'pf-tab-json');
      t.pass('focus follows the selected tab');
      const json = page.getByLabel('Agent spec (JSON)');
      const body = JSON.parse(await json.inputValue());
      t.equal(body.model, 'scripted', 'the JSON view shows the saved spec');
      await json.fill(JSON.stringify({ ...body, max_turns: 0 }, null, 2));
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('alert').filter({ hasText: 'max_turns' }).waitFor();
      t.pass('a bad max_turns in the JSON view is reported on top');
      await checkPage(t, page, 'agent-edit');

      await page.goto(`${base}/ui/platform/agents`);
      await page
        .getByRole('cell', { name: /helper/ })
        .first()
        .waitFor();
      await checkPage(t, page, 'agents');
    });

    let sessionId = '';
    t.test('chat: streamed tokens and a tool call; a reload mid-stream resumes the run', async (t) => {
      await page.goto(`${base}/ui/platform/chat?agent=helper`);
      const box = page.getByLabel('Message to helper');
      await box.fill('remember the sky is green');
      await box.press('Enter');
      const tool = page.locator('.pf-tool[data-tool="remember"]');
      await tool.waitFor();
      t.pass('the tool call shows as it happens');
      const assistant = page.locator('.pf-msg-assistant').last();
      await assistant.getByText('I stored that').waitFor();
      const partial = await assistant.locator('.pf-msg-text').last().innerText();
      t.ok(partial.length < ANSWER.length, `tokens arrive before the answer is complete (${partial.length} chars)`);
      await screenshot(page, 'platform-chat-streaming');
      await page.waitForURL(/[?&]session=/);
      sessionId = new URL(page.url()).searchParams.get('session')!;
      t.ok(sessionId, 'the session id is in the URL');

      await page.reload();
      // After the reload the run is rejoined: the replay shows the tool call again and the answer keeps growing.
      await page.locator('.pf-tool[data-tool="remember"]').waitFor();
      const resumed = page.locator('.pf-msg-assistant').last().locator('.pf-msg-text').last();
      await resumed.waitFor();
      const atResume = await resumed.innerText();
      t.ok(atResume.length < ANSWER.length, `the run was still streaming after the reload (${atResume.length} chars)`);
      await page.locator('.pf-run-state[data-state="done"]').waitFor({ timeout: 120_000 });
      t.equal((await resumed.innerText()).trim(), ANSWER, 'the whole answer arrived after the reload');
      t.match(await text('.pf-tool[data-tool="remember"]'), /done/);
      await page.locator('.pf-msg-user', { hasText: 'remember the sky is green' }).waitFor();
      t.pass('the question sent before the reload is back above the answer');
      const status = (await app.inject({ url: `/api/v1/agents/helper/sessions/${sessionId}/status` })).json();
      t.equal(status.status, 'idle', 'the run is over');
      await checkPage(t, page, 'chat');
    });

    t.test('chat: Stop cancels a running run', async (t) => {
      await page.getByRole('button', { name: 'New session' }).click();
      await page.waitForURL((u) => !u.searchParams.has('session'));
      const box = page.getByLabel('Message to helper');
      await box.fill('tell me a story');
      await box.press('Enter');
      await page.locator('.pf-msg-assistant').last().getByText('Once upon').waitFor();
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.locator('.pf-run-state[data-state="cancelled"]').waitFor();
      t.match(await text('[role="status"].alert'), /cancelled/);
      const sid = new URL(page.url()).searchParams.get('session')!;
      t.not(sid, sessionId, 'a new session');
      const status = (await app.inject({ url: `/api/v1/agents/helper/sessions/${sid}/status` })).json();
      t.equal(status.status, 'idle', 'the server stopped the run');
    });

    t.test('chat: a connection that drops mid-stream is rejoined without a reload', async (t) => {
      await page.getByRole('button', { name: 'New session' }).click();
      await page.waitForURL((u) => !u.searchParams.has('session'));
      const rejoins: string[] = [];
      const watch = (r: { url(): string }) => {
        if (/\/sessions\/[^/]+\/stream$/.test(new URL(r.url()).pathname)) rejoins.push(r.url());
      };
      page.on('request', watch);
      const box = page.getByLabel('Message to helper');
      await box.fill('count slowly');
      await box.press('Enter');
      const answer = page.locator('.pf-msg-assistant').last().locator('.pf-msg-text').last();
      await answer.getByText('Counting').waitFor();
      await page.waitForURL(/[?&]session=/);
      // The connection drops (a proxy restart, a flaky network): the server cuts every open socket, the stream's
      // included; the run goes on in the background.
      app.server.closeAllConnections();
      await page.locator('.pf-run-state[data-state="done"]').waitFor({ timeout: 120_000 });
      page.off('request', watch);
      t.equal((await answer.innerText()).trim(), `Counting: ${ANSWER}`, 'the whole answer, once');
      t.ok(rejoins.length >= 1, `the page rejoined the run (${rejoins.length} GET …/stream)`);
      t.equal(await page.locator('.pf-msg-user', { hasText: 'count slowly' }).count(), 1, 'the question shown once');
    });

    t.test('sessions: the chat is listed with its history', async (t) => {
      await page.goto(`${base}/ui/platform/sessions?agent=helper`);
      await page.getByRole('link', { name: sessionId }).click();
      const history = page.getByRole('complementary', { name: `History of session ${sessionId}` });
      await history.getByText('remember the sky is green').waitFor();
      t.pass('the stored turn is shown');
      await checkPage(t, page, 'sessions');
    });

    t.test('memory: the agent namespace and a search that finds what the tool stored', async (t) => {
      await page.goto(`${base}/ui/platform/memory`);
      await page.getByRole('link', { name: 'agent:helper' }).click();
      await page.getByRole('cell', { name: 'sky', exact: true }).waitFor();
      await page.getByLabel('Search', { exact: true }).fill('green');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/[?&]q=green/);
      const results = page.getByRole('table', { name: 'Results for green' });
      await results.getByText('remember the sky is green').waitFor();
      t.pass('the search result shows the stored record');
      await page.getByLabel('Search', { exact: true }).fill('volcano');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText('Nothing in agent:helper matches').waitFor();
      t.pass('a search without hits says so');
      await page.getByLabel('Search', { exact: true }).fill('green');
      await page.getByRole('button', { name: 'Search' }).click();
      await results.waitFor();
      await checkPage(t, page, 'memory');
    });

    t.test("traces: the agent's run, and a trace with a timed generation and its tokens", async (t) => {
      await page.goto(`${base}/ui/platform/traces`);
      // The run that called the tool: its session is the first chat's.
      await page.getByRole('row').filter({ hasText: sessionId }).getByRole('link', { name: 'agent:helper' }).click();
      await page.waitForURL(/\/ui\/platform\/traces\//);
      await page.locator('.pf-tl-row', { hasText: 'remember' }).waitFor();
      t.pass("the agent's trace lists its tool span");

      const ingest = await app.inject({
        method: 'POST',
        url: '/api/v1/observability/traces',
        payload: {
          trace_id: 'trace-with-generation',
          name: 'checkout-flow',
          tags: ['console'],
          spans: [
            { name: 'plan', start_time: '2026-01-01T10:00:00.000Z', end_time: '2026-01-01T10:00:01.000Z' },
            { name: 'fetch-prices', start_time: '2026-01-01T10:00:01.000Z', end_time: '2026-01-01T10:00:03.000Z' },
          ],
        },
      });
      t.equal(ingest.statusCode, 202);
      const gen = await app.inject({
        method: 'POST',
        url: '/api/v1/observability/traces/trace-with-generation/generations',
        payload: {
          name: 'answer',
          model: 'gpt-test',
          output: 'Total: 42',
          usage: { prompt_tokens: 120, completion_tokens: 30 },
          start_time: '2026-01-01T10:00:03.000Z',
          end_time: '2026-01-01T10:00:04.000Z',
        },
      });
      t.equal(gen.statusCode, 201);
      await page.goto(`${base}/ui/platform/traces`);
      await page.getByRole('link', { name: 'checkout-flow' }).click();
      const rows = page.locator('.pf-tl-row');
      await rows.nth(2).waitFor();
      t.same(
        await rows.locator('.pf-tl-name').allInnerTexts(),
        ['plan', 'fetch-prices', 'answer'],
        'spans and the generation in time order',
      );
      t.match(await rows.nth(2).innerText(), /120 in \/ 30 out tokens/);
      t.match(await rows.nth(1).innerText(), /2\.00 s/);
      const genTable = page.getByRole('table', { name: 'Generations' });
      t.match(await genTable.innerText(), /gpt-test[\s\S]*120[\s\S]*30[\s\S]*150/);
      await checkPage(t, page, 'trace');
      await page.goto(`${base}/ui/platform/traces`);
      await page.getByRole('link', { name: 'checkout-flow' }).waitFor();
      await checkPage(t, page, 'traces');
    });

    t.test('providers: readiness, defaults and health', async (t) => {
      await page.goto(`${base}/ui/platform/providers`);
      const defaults = page.getByRole('table', { name: 'Default and available providers per primitive' });
      await defaults.getByRole('row', { name: /llm/ }).waitFor();
      t.match(await defaults.getByRole('row', { name: /llm/ }).innerText(), /scripted/);
      await page
        .getByRole('table', { name: /Provider health/ })
        .getByRole('row', { name: /scripted/ })
        .waitFor();
      t.pass('health rows per provider');
      await checkPage(t, page, 'providers');
    });

    t.test('the sidebar lists the platform pages', async (t) => {
      const nav = page.getByRole('navigation').first();
      for (const name of ['Agents', 'Chat', 'Sessions', 'Memory', 'Traces', 'Providers'])
        t.ok(await nav.getByRole('link', { name, exact: true }).count(), `${name} in the sidebar`);
      t.same(pageErrors, [], 'no uncaught errors in the page');
    });
  });

  t.test('with API-key auth on /api/v1, the console still works through the session cookie', async (t) => {
    const { app, base } = await startConsole(t, apiKeyUsers(ALICE_BOB_ROOT));
    t.equal((await app.inject({ url: '/api/v1/agents' })).statusCode, 401, 'the platform API wants a credential');
    const browser = await launchBrowser(t);
    const context = await newContext(t, browser, base);
    context.setDefaultTimeout(45_000);
    const page = await context.newPage();
    await loginAsAdmin(page, base);
    await page.goto(`${base}/ui/platform/new-agent`);
    await page.getByLabel('Name').fill('keyed');
    await page.getByLabel('Model').fill('m');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByText("Created agent 'keyed'.").waitFor();
    const spec = await app.inject({ url: '/api/v1/agents/keyed', headers: keyHeader('root') });
    t.equal(spec.json().owner_id, 'admin', 'created through the public API as the signed-in user');
    await page.goto(`${base}/ui/platform/agents`);
    await page.getByRole('link', { name: 'keyed' }).first().waitFor();
    t.pass('the list reads with the cookie');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete keyed' }).click();
    await page.getByText('No agents yet.').waitFor();
    t.equal(
      (await app.inject({ url: '/api/v1/agents/keyed', headers: keyHeader('root') })).statusCode,
      404,
      'deleted through the API (DELETE with the CSRF header)',
    );
  });
}
