import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserProvider, LiveFrame } from '../../core/primitives/browser.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

/** Case names, so a provider's test can skip them by name with a reason. */
export const BROWSER_CASES = {
  lifecycle: 'session lifecycle: start, get, list by owner, stop',
  generatedId: 'a session id is generated when absent',
  navigate: 'navigate, then read title and content',
  interact: 'type into an input, click a button, evaluate the result',
  screenshot: 'screenshot is a base64 PNG',
  failedAction: 'an action on a missing element rejects',
  liveView: 'live view: watching a session delivers image frames',
  evaluateThrows: 'evaluate returns JSON values; a throwing expression rejects with its message',
  info: 'session info shows the current URL, title and last use',
  unsupported: 'capabilities declared false reject with 501',
} as const;

const PAGE = `<!doctype html><html><head><title>Conformance page</title></head><body>
<h1 id="greeting">hello switchboard</h1>
<input id="name"><button id="go" onclick="document.getElementById('greeting').textContent='hi '+document.getElementById('name').value">go</button>
</body></html>`;

/** A page on loopback for navigation cases; closed by the case's teardown. */
async function servePage(t: Runner): Promise<string> {
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** The browser suite: every browser provider runs it with its own runner and named skips. */
export async function browserSuite(t: Runner, opts: SuiteOptions<BrowserProvider>): Promise<void> {
  const run = caseRunner(t, opts);

  await run(BROWSER_CASES.lifecycle, async (t, p) => {
    const a = await p.startSession('alice', {
      session_id: 'conf-a',
      viewport: { width: 800, height: 600 },
      config: { k: 'v' },
    });
    t.match(a, {
      session_id: 'conf-a',
      owner_id: 'alice',
      status: 'active',
      viewport: { width: 800, height: 600 },
      config: { k: 'v' },
    });
    t.ok(!Number.isNaN(Date.parse(a.created_at)), 'created_at is a timestamp');
    await p.startSession('bob', { session_id: 'conf-b' });
    t.same(
      (await p.listSessions('alice')).map((s) => s.session_id),
      ['conf-a'],
      'owner filter',
    );
    t.same((await p.listSessions()).map((s) => s.session_id).sort(), ['conf-a', 'conf-b'], 'all sessions');
    t.equal((await p.getSession('conf-b'))?.owner_id, 'bob');
    t.equal(await p.getSession('nope'), undefined, 'unknown id is undefined');
    t.equal(await p.stopSession('conf-a'), true);
    t.equal(await p.getSession('conf-a'), undefined, 'stopped session is gone');
    t.equal(await p.stopSession('conf-a'), false, 'stopping twice reports false');
  });

  await run(BROWSER_CASES.generatedId, async (t, p) => {
    const s1 = await p.startSession('alice', {});
    const s2 = await p.startSession('alice', {});
    t.ok(s1.session_id.length > 0);
    t.not(s1.session_id, s2.session_id, 'ids are unique');
    t.equal(s1.viewport, null, 'no viewport unless asked');
    t.same(s1.config, {});
  });

  await run(BROWSER_CASES.navigate, async (t, p) => {
    const url = await servePage(t);
    const s = await p.startSession('alice', {});
    const nav = await p.navigate(s.session_id, url);
    t.equal(nav.title, 'Conformance page');
    t.match((await p.content(s.session_id)).content, /hello switchboard/);
  });

  await run(BROWSER_CASES.interact, async (t, p) => {
    const url = await servePage(t);
    const s = await p.startSession('alice', {});
    await p.navigate(s.session_id, url);
    t.match(await p.typeText(s.session_id, '#name', 'ada'), { status: 'ok' });
    t.match(await p.click(s.session_id, '#go'), { status: 'ok' });
    t.same(await p.evaluate(s.session_id, "document.getElementById('greeting').textContent"), { result: 'hi ada' });
  });

  await run(BROWSER_CASES.screenshot, async (t, p) => {
    const url = await servePage(t);
    const s = await p.startSession('alice', {});
    await p.navigate(s.session_id, url);
    const shot = await p.screenshot(s.session_id);
    t.equal(shot.format, 'png');
    t.same([...Buffer.from(shot.data, 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'PNG signature');
  });

  await run(BROWSER_CASES.failedAction, async (t, p) => {
    const url = await servePage(t);
    const s = await p.startSession('alice', {});
    await p.navigate(s.session_id, url);
    await t.rejects(p.click(s.session_id, '#does-not-exist'));
  });

  await run(BROWSER_CASES.liveView, async (t, p) => {
    const url = await servePage(t);
    const s = await p.startSession('alice', {});
    await p.navigate(s.session_id, url);
    const frames: LiveFrame[] = [];
    let enough!: () => void;
    const two = new Promise<void>((r) => (enough = r));
    const stop = await p.watch(s.session_id, (f) => {
      frames.push(f);
      if (frames.length === 2) enough();
    });
    const deadline = new Promise<void>((r) => setTimeout(r, 30_000).unref());
    await Promise.race([two, deadline]);
    stop();
    t.ok(frames.length >= 2, `at least two frames arrive (got ${frames.length})`);
    for (const f of frames.slice(0, 2)) {
      const head = [...Buffer.from(f.data, 'base64').subarray(0, 2)];
      t.same(head, f.mime === 'image/png' ? [0x89, 0x50] : [0xff, 0xd8], `${f.mime} frame has its signature`);
    }
  });

  await run(BROWSER_CASES.evaluateThrows, async (t, p) => {
    const url = await servePage(t);
    const s = await p.startSession('alice', {});
    await p.navigate(s.session_id, url);
    t.same(await p.evaluate(s.session_id, '1 + 2'), { result: 3 });
    await t.rejects(
      p.evaluate(s.session_id, "(() => { throw new Error('boom in page') })()"),
      /boom in page/,
      "the page's error message",
    );
  });

  await run(BROWSER_CASES.info, async (t, p) => {
    const url = await servePage(t);
    const s = await p.startSession('alice', {});
    await p.navigate(s.session_id, url);
    const info = await p.getSession(s.session_id);
    t.equal(info?.title, 'Conformance page', 'info has the current title');
    t.equal(info?.url, url, 'and the current URL');
    t.ok(info?.last_used_at && !Number.isNaN(Date.parse(info.last_used_at)), 'and when it was last used');
  });

  await run(BROWSER_CASES.unsupported, async (t, p) => {
    const s = await p.startSession('alice', {});
    const gated: Array<[string, () => Promise<unknown>]> = [
      ['navigation', () => p.navigate(s.session_id, 'http://127.0.0.1/')],
      ['navigation', () => p.content(s.session_id)],
      ['screenshots', () => p.screenshot(s.session_id)],
      ['evaluate', () => p.evaluate(s.session_id, '1')],
      ['live_view', () => p.watch(s.session_id, () => {})],
    ];
    let checked = 0;
    for (const [cap, call] of gated) {
      if (p.capabilities[cap] === true) continue;
      checked++;
      await t.rejects(call(), { statusCode: 501 }, `capability '${cap}' is false, so the call is a 501`);
    }
    t.comment(`${checked} unsupported operations checked`);
  });
}
