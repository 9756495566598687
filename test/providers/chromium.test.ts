import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer, request as httpRequest, type Server } from 'node:http';
import t from 'tap';
import type { BrowserProvider } from '../../core/primitives/browser.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { chromiumBrowser } from '../../providers/chromium/index.ts';
import { findChromium } from '../../providers/chromium/options.ts';
import { browserSuite } from '../conformance/browser.ts';
import type { Runner } from '../conformance/kit.ts';
import { listenLoopback } from '../fixtures/loopback.ts';
import { agentApp } from '../agents/helpers.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { buildApp } from '../../plugins/app.ts';
import { openStore } from '../../core/store.ts';
import { freePort } from '../fixtures/free-port.ts';

const BIN = fileURLToPath(new URL('../../bin/switchboard.ts', import.meta.url));

// Each case launches Chromium; on a loaded two-core machine that alone takes seconds.
t.setTimeout(900_000);

if (!findChromium()) {
  t.fail('no Chromium binary: test/setup/install-deps.sh installs Debian chromium');
  process.exit(1);
}

const silent = { info() {}, warn() {}, error() {}, debug() {} };
const ctx = { logger: silent } as unknown as ProviderContext;
const make = async (options: Record<string, unknown> = {}) =>
  chromiumBrowser.create('chromium', options, ctx) as Promise<BrowserProvider>;

/** A loopback site: `/` a form page, `/r?to=` a redirect, `/img` a page loading an image from `?src=`. Counts hits per path. */
async function site(t: { teardown: (fn: () => unknown) => void }) {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    hits.set(u.pathname, (hits.get(u.pathname) ?? 0) + 1);
    if (u.pathname === '/r') return res.writeHead(302, { location: u.searchParams.get('to') ?? '/' }).end();
    if (u.pathname === '/img')
      return res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<title>img</title><img src="${u.searchParams.get('src')}">`);
    if (u.pathname === '/pixel.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(8));
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Home</title><p id="t">local page text</p>');
  });
  const base = await listenLoopback(server);
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { base, port: new URL(base).port, hits };
}

t.test('chromium passes the browser conformance suite', async (t) => {
  await browserSuite(t as unknown as Runner, { make: () => make({ allow_private_networks: true }) });
});

t.test('egress guard with the default options', async (t) => {
  const { base, port, hits } = await site(t);
  const p = await make();
  t.teardown(() => p.close());
  const s = await p.startSession('alice', {});
  const refused = [
    base,
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    `http://2130706433:${port}/`,
    `http://0x7f.1:${port}/`,
    'file:///etc/passwd',
    'chrome://version',
    'data:text/html,<h1>x</h1>',
  ];
  for (const url of refused) {
    await t.rejects(p.navigate(s.session_id, url), /refused|not allowed/, `navigation to ${url} is refused`);
  }
  t.equal(hits.get('/') ?? 0, 0, 'the loopback site never saw a request');

  // localhost is named in allowed_hosts (so it may be private); the redirect target and the image are not.
  const q = await make({ allowed_hosts: ['localhost'] });
  t.teardown(() => q.close());
  const s2 = await q.startSession('alice', {});
  const local = `http://localhost:${port}`;
  await t.rejects(
    q.navigate(s2.session_id, `${local}/r?to=${encodeURIComponent(`http://127.0.0.1:${port}/secret`)}`),
    /refused after a redirect/,
    'a redirect to a private address is refused',
  );
  t.equal(hits.get('/secret') ?? 0, 0, 'the redirect target was never fetched');
  await q.navigate(s2.session_id, `${local}/img?src=${encodeURIComponent(`http://127.0.0.1:${port}/pixel.png`)}`);
  t.equal(hits.get('/img'), 1, 'the allowed page loaded');
  t.equal(hits.get('/pixel.png') ?? 0, 0, 'its image from a private address was blocked');
});

t.test('limits: session cap, idle reaping, a killed browser', async (t) => {
  const { base } = await site(t);
  const p = await make({ allow_private_networks: true, max_sessions: 2 });
  t.teardown(() => p.close());
  await p.startSession('alice', { session_id: 'one' });
  await p.startSession('alice', { session_id: 'two' });
  await t.rejects(
    p.startSession('alice', {}),
    { statusCode: 429, message: /max_sessions/ },
    'the session past the cap names it',
  );

  const idle = await make({ allow_private_networks: true, idle_timeout_seconds: 1 });
  t.teardown(() => idle.close());
  await idle.startSession('alice', { session_id: 'sleepy' });
  const deadline = Date.now() + 60_000;
  while ((await idle.getSession('sleepy')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  t.equal(await idle.getSession('sleepy'), undefined, 'an idle session is reaped');
  await idle.close();

  await p.stopSession('two');
  const s = await p.startSession('alice', { session_id: 'victim' });
  await p.navigate(s.session_id, base);
  // Chromium is a child of this process (playwright-core spawns it directly).
  const pids = execFileSync('pgrep', ['-P', String(process.pid), '-f', 'chromium'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number);
  t.ok(pids.length > 0, 'found the Chromium process');
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  const until = Date.now() + 60_000;
  while ((await p.getSession('victim'))?.status !== 'stopped' && Date.now() < until)
    await new Promise((r) => setTimeout(r, 100));
  await t.rejects(p.content('victim'), /was lost/, 'the affected session reports it was lost');
  await p.stopSession('one');
  const fresh = await p.startSession('alice', {});
  t.match((await p.navigate(fresh.session_id, base)).title, 'Home', 'the next session works on a relaunched browser');
});

/** Renderer processes among the descendants of this test process (each context's page has one). */
function renderers(): number {
  const pids = [process.pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      const out = execFileSync('pgrep', ['-P', String(pids[i])], { encoding: 'utf8' });
      pids.push(...out.trim().split('\n').filter(Boolean).map(Number));
    } catch {
      // no children
    }
  }
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer');
    } catch {
      return false;
    }
  }).length;
}

async function until(what: () => boolean | Promise<boolean>, ms = 60_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return what();
}

t.test('contexts made ahead stay within max_sessions and keep sessions apart', async (t) => {
  const { base } = await site(t);
  const p = await make({ allow_private_networks: true, max_sessions: 2, pool_size: 4 });
  t.teardown(() => p.close());
  const a = await p.startSession('alice', { session_id: 'a' });
  // The pool fills in the background, up to the cap less the one open session: two renderers at most.
  t.ok(await until(() => renderers() === 2), 'one session and one context made ahead');
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(renderers(), 2, 'the pool (size 4) stops at the room max_sessions leaves');
  // This start takes the waiting context; its viewport is set on the page made at the default size.
  const b = await p.startSession('bob', { session_id: 'b', viewport: { width: 500, height: 300 } });
  await t.rejects(
    p.startSession('carol', {}),
    { statusCode: 429, message: /max_sessions/ },
    'the cap still holds with a pool',
  );
  t.ok(renderers() <= 2, 'no context is made ahead when the cap is reached');
  const png = Buffer.from((await p.screenshot(b.session_id)).data, 'base64');
  t.same([png.readUInt32BE(16), png.readUInt32BE(20)], [500, 300], 'a pooled page takes the asked viewport');
  t.same(await p.evaluate(b.session_id, '[innerWidth, innerHeight]'), { result: [500, 300] });

  // A pooled context is as fresh as a new one: nothing set in one session shows in the next.
  await p.navigate(a.session_id, base);
  await p.evaluate(a.session_id, "document.cookie = 'who=alice; max-age=600'; localStorage.setItem('who', 'alice')");
  await p.stopSession(a.session_id);
  await p.stopSession(b.session_id);
  t.ok(await until(() => renderers() === 2), 'stopping sessions makes room for the pool again (size 4, cap 2)');
  const c = await p.startSession('carol', {});
  await p.navigate(c.session_id, base);
  t.same(
    await p.evaluate(c.session_id, "[document.cookie, localStorage.getItem('who')]"),
    { result: ['', null] },
    "the next owner sees none of alice's cookies or storage",
  );
});

t.test('concurrent starts cannot pass max_sessions', async (t) => {
  const p = await make({ allow_private_networks: true, max_sessions: 2 });
  t.teardown(() => p.close());
  // All four arrive before any has its context (the first one even waits for Chromium to launch).
  const results = await Promise.allSettled([1, 2, 3, 4].map(() => p.startSession('alice', {})));
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 2, 'two sessions started');
  t.same(
    results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.statusCode),
    [429, 429],
    'the other two are 429',
  );
  t.equal((await p.listSessions()).length, 2);
});

t.test('content and title are read where the page cannot forge them', async (t) => {
  const forging = createServer((req, res) => {
    const other = req.headers.host?.startsWith('localhost');
    res.writeHead(200, { 'content-type': 'text/html' }).end(
      other
        ? '<title>Other site</title><p>second page</p>'
        : `<!doctype html><title>Real title</title><p>real text</p><script>
          Object.defineProperty(Element.prototype, 'outerHTML', { get: () => '<p>FORGED-' + 'HTML</p>' });
          Object.defineProperty(Document.prototype, 'title', { get: () => 'forged' });
          window.XMLSerializer = function () { this.serializeToString = () => 'forged'; };
        </script>`,
    );
  });
  const base = await listenLoopback(forging);
  t.teardown(() => new Promise<void>((r) => forging.close(() => r())));
  const p = await make({ allow_private_networks: true });
  t.teardown(() => p.close());
  const s = await p.startSession('alice', {});
  const nav = await p.navigate(s.session_id, base);
  t.equal(nav.title, 'Real title', "the title comes from the document, not from the page's getter");
  t.same(await p.evaluate(s.session_id, 'document.title'), { result: 'forged' }, 'the page did redefine it');
  const { content } = await p.content(s.session_id);
  t.match(content, /^<!DOCTYPE html><html><head><title>Real title<\/title>/, 'doctype and document as served');
  t.match(content, /real text/);
  t.notMatch(content, /FORGED-HTML/, 'the forged getter did not answer');
  // Another site is another renderer process: reads still find the page's main frame.
  const other = `http://localhost:${new URL(base).port}/`;
  t.equal((await p.navigate(s.session_id, other)).title, 'Other site');
  t.match((await p.content(s.session_id)).content, /second page/);
  await t.rejects(p.content('nope'), /not found/);
});

t.test('launch_at_start: Chromium is up before the first session; by default it is not', async (t) => {
  const chromiumChildren = () => {
    try {
      return execFileSync('pgrep', ['-P', String(process.pid), '-f', 'chromium'], { encoding: 'utf8' }).trim() !== '';
    } catch {
      return false;
    }
  };
  const lazy = await make({ allow_private_networks: true });
  await new Promise((r) => setTimeout(r, 1500));
  t.notOk(chromiumChildren(), 'by default the provider starts no browser until a session needs one');
  await lazy.close();
  const eager = await make({ allow_private_networks: true, launch_at_start: true });
  t.teardown(() => eager.close());
  t.ok(await until(chromiumChildren), 'Chromium runs with no session asked for');
  t.ok(await until(() => renderers() === 1), 'and a context waits for the first session');
  const s = await eager.startSession('alice', {});
  t.equal((await eager.getSession(s.session_id))?.status, 'active');
  await t.rejects(make({ pool_size: 1.5 }), /pool_size/, 'pool_size is a whole number');
  await t.rejects(make({ launch_at_start: 'yes' }), /launch_at_start/);
});

/** Read a server-sent event stream until `n` data events arrived (or the stream ends). */
function readEvents(url: string, n: number): Promise<{ status: number; events: Array<Record<string, unknown>> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, (res) => {
      const events: Array<Record<string, unknown>> = [];
      let buf = '';
      if (res.statusCode !== 200) {
        res.resume();
        return resolve({ status: res.statusCode ?? 0, events });
      }
      res.on('data', (chunk: Buffer) => {
        buf += chunk.toString();
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)));
          if (events.length >= n) {
            req.destroy();
            return resolve({ status: 200, events });
          }
        }
      });
      res.on('end', () => resolve({ status: 200, events }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('HTTP: sessions, actions and a signed live view', async (t) => {
  const { base } = await site(t);
  const app = await makeApp(t, {
    providers: {
      browser: { instances: { chromium: { type: 'chromium', options: { allow_private_networks: true } } } },
    },
  });
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/browser/sessions',
    payload: { session_id: null, viewport: { width: 640, height: 480 }, config: {} },
  });
  t.equal(created.statusCode, 201, created.body);
  const id = created.json().session_id as string;
  const nav = await app.inject({
    method: 'POST',
    url: `/api/v1/browser/sessions/${id}/navigate`,
    payload: { url: base },
  });
  t.match(nav.json(), { title: 'Home' });
  t.match(
    (await app.inject({ method: 'GET', url: `/api/v1/browser/sessions/${id}/content` })).json().content,
    /local page text/,
  );
  const shot = (await app.inject({ method: 'GET', url: `/api/v1/browser/sessions/${id}/screenshot` })).json();
  const png = Buffer.from(shot.data, 'base64');
  t.same([png.readUInt32BE(16), png.readUInt32BE(20)], [640, 480], 'the screenshot is a PNG of the viewport size');
  const bad = await app.inject({
    method: 'POST',
    url: `/api/v1/browser/sessions/${id}/evaluate`,
    payload: { expression: 'nope.nope' },
  });
  t.equal(bad.statusCode, 400);
  t.match(bad.json().detail, /nope is not defined/);
  const info = (await app.inject({ method: 'GET', url: `/api/v1/browser/sessions/${id}` })).json();
  t.match(info, { title: 'Home', url: `${base}/` });

  const view = await app.inject({ method: 'GET', url: `/api/v1/browser/sessions/${id}/live-view?expires=120` });
  t.equal(view.statusCode, 200);
  const live = view.json() as { url: string; expires: number; expires_at: string };
  t.equal(live.expires, 120);
  t.ok(Math.abs(Date.parse(live.expires_at) - Date.now() - 120_000) < 60_000, 'expires_at is about two minutes ahead');
  const viewer = new URL(live.url);
  t.equal(viewer.search.includes('sig='), true, 'the link is signed');
  const page = await fetch(`${origin}${viewer.pathname}${viewer.search}`);
  t.equal(page.status, 200, 'the viewer opens without other credentials');
  t.match(await page.text(), /EventSource/);
  const frames = `${origin}${viewer.pathname}/frames${viewer.search}`;
  const got = await readEvents(frames, 2);
  t.equal(got.events.length, 2, 'the live view streams at least two frames');
  t.match(got.events[0], { mime: 'image/jpeg', data: /^\/9j/ });
  const tampered = frames.replace(/sig=([^&]+)/, (_m, sig: string) => `sig=${sig.slice(0, -2)}xx`);
  t.equal((await readEvents(tampered, 1)).status, 403, 'a tampered link is 403');
  const short = new URL(
    (await app.inject({ method: 'GET', url: `/api/v1/browser/sessions/${id}/live-view?expires=1` })).json().url,
  );
  await new Promise((r) => setTimeout(r, 2500));
  t.equal(
    (await readEvents(`${origin}${short.pathname}/frames${short.search}`, 1)).status,
    403,
    'an expired link is 403',
  );
  t.equal((await fetch(`${origin}${short.pathname}${short.search}`)).status, 403, 'and so is its viewer page');

  t.equal((await app.inject({ method: 'DELETE', url: `/api/v1/browser/sessions/${id}` })).statusCode, 204);
});

t.test('an agent run navigates and summarises a local page through its browser tools', async (t) => {
  const { base } = await site(t);
  const app = await agentApp(t, {
    script: [
      {
        match: 'summarise',
        turns: [
          { tool_calls: [{ name: 'navigate', input: { url: base } }] },
          { tool_calls: [{ name: 'read_page', input: {} }] },
          { content: 'Summary: {{tool_result}}' },
        ],
      },
    ],
    config: {
      providers: {
        browser: { instances: { chromium: { type: 'chromium', options: { allow_private_networks: true } } } },
      },
    },
  });
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: {
      name: 'surfer',
      model: 'm',
      primitives: { browser: { enabled: true } },
      hooks: { auto_memory: false, auto_trace: false },
    },
  });
  t.equal(created.statusCode, 201, created.body);
  const chat = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/surfer/chat',
    payload: { message: 'summarise the local page' },
  });
  t.equal(chat.statusCode, 200, chat.body);
  t.match(chat.json().response, /Summary: Home\s+local page text/, 'the page text reached the model as readable text');
  t.same(
    (await app.inject({ method: 'GET', url: '/api/v1/browser/sessions' })).json().sessions,
    [],
    'the run closed its session',
  );
});

t.test('chromium is the default browser where a binary is found; without one it reports down', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: tempDir() };
  delete env.SWITCHBOARD_CONFIG;
  delete env.REDIS_URL;
  const app = await buildApp({ env, config: {}, store: await openStore({ backend: 'memory' }), logLevel: 'silent' });
  t.teardown(() => app.close());
  const listing = (await app.inject({ method: 'GET', url: '/api/v1/providers' })).json();
  t.equal(listing.browser.default, 'chromium', 'chromium replaces noop as the default');
  t.ok(listing.browser.available.includes('noop'), 'noop stays selectable');

  const missing = await make({ executable_path: '/nonexistent/chromium' });
  t.equal(await missing.healthcheck(), 'down', 'no binary: healthcheck says down');
  await t.rejects(
    missing.startSession('alice', {}),
    { statusCode: 503, message: /apt-get install chromium/ },
    'and a session says how to install one',
  );
});

t.test('SIGTERM of Switchboard leaves no Chromium behind', async (t) => {
  const { base } = await site(t);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DATA_DIR: tempDir(), LOG_LEVEL: 'warn' };
  delete env.SWITCHBOARD_CONFIG;
  delete env.REDIS_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', BIN], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  t.teardown(() => child.kill('SIGKILL'));
  const origin = `http://127.0.0.1:${port}`;
  const up = Date.now() + 120_000;
  while (
    Date.now() < up &&
    !(await fetch(`${origin}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  )
    await new Promise((r) => setTimeout(r, 200));
  const s = await (
    await fetch(`${origin}/api/v1/browser/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
  ).json();
  t.ok(s.session_id, 'a session started on the default (chromium) provider');
  // A loopback page is refused by default; the refusal proves a real page action ran.
  const nav = await fetch(`${origin}/api/v1/browser/sessions/${s.session_id}/navigate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: base }),
  });
  t.equal(nav.status, 400);
  const pids = execFileSync('pgrep', ['-P', String(child.pid), '-f', 'chromium'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number);
  t.ok(pids.length > 0, 'Chromium runs as a child of Switchboard');
  child.kill('SIGTERM');
  await exited;
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const gone = Date.now() + 30_000;
  while (pids.some(alive) && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
  t.same(pids.filter(alive), [], 'no Chromium process survives');
});
