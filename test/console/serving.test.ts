import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { makeApp, tempDir } from '../helpers/app.ts';
import { adminBasic } from '../helpers/registry-auth.ts';

/**
 * plugins/console over inject(): the SPA and its hashed assets, the CSP, the browser redirects of the older
 * HTML routes (scripts keep getting what they got), and the bundle-size budget (< 200 KB gzipped, issue 20).
 */
t.setTimeout(300_000);

const asHtml = { accept: 'text/html,application/xhtml+xml' };

t.test('the console page, its assets and the CSP', async (t) => {
  const app = await makeApp(t);
  const index = await app.inject({ url: '/ui/' });
  t.equal(index.statusCode, 200);
  t.match(index.headers['content-type'], /^text\/html/);
  t.equal(index.headers['cache-control'], 'no-cache');
  const csp = String(index.headers['content-security-policy']);
  t.match(csp, /script-src 'self'/);
  t.notMatch(csp, /unsafe-inline|unsafe-eval/, 'no inline script or style is allowed');
  t.notMatch(index.body, /<script>|<script(?![^>]*\bsrc=)[^>]*>/, 'the page itself has no inline script');

  const deep = await app.inject({ url: '/ui/servers/some/deep/path?q=x' });
  t.equal(deep.statusCode, 200, 'any /ui path answers the app (it routes in the browser)');
  t.equal(deep.body, index.body);

  const js = /src="(\/ui\/assets\/app-[0-9a-f]{12}\.js)"/.exec(index.body)?.[1];
  const css = /href="(\/ui\/assets\/app-[0-9a-f]{12}\.css)"/.exec(index.body)?.[1];
  t.ok(js && css, 'hashed asset names');
  const plain = await app.inject({ url: js! });
  t.equal(plain.statusCode, 200);
  t.match(plain.headers['content-type'], /^text\/javascript/);
  t.match(plain.headers['cache-control'], /immutable/);
  t.notOk(plain.headers['content-encoding']);
  const gz = await app.inject({ url: js!, headers: { 'accept-encoding': 'gzip, br' } });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.ok(gz.rawPayload.length < plain.rawPayload.length, 'gzip is smaller');
  const cssGz = await app.inject({ url: css!, headers: { 'accept-encoding': 'gzip' } });
  t.match(cssGz.headers['content-type'], /^text\/css/);

  // The budget: the console's JS + CSS under 200 KB gzipped (a size, not a timing).
  const total = gzipSync(plain.rawPayload, { level: 9 }).length + cssGz.rawPayload.length;
  t.ok(total < 200 * 1024, `JS + CSS gzipped: ${(total / 1024).toFixed(1)} KB < 200 KB`);

  const stale = await app.inject({ url: '/ui/assets/app-000000000000.js' });
  t.equal(stale.statusCode, 404);
  t.equal(stale.json().code, 'SB_ERR_CONSOLE_ASSET');
});

t.test('a browser on the older HTML routes goes to the console; scripts get what they got', async (t) => {
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0 } } });
  const admin = adminBasic(app);
  const cases: Array<[string, string]> = [
    ['/', '/ui/'],
    ['/api/', '/ui/servers'],
    ['/api/?query=weather', '/ui/servers?q=weather'],
    ['/api/tokens', '/ui/tokens'],
    ['/api/edit/weather', '/ui/edit/weather'],
    ['/edit/weather', '/ui/edit/weather'],
  ];
  for (const [url, to] of cases) {
    const r = await app.inject({ url, headers: { ...asHtml, ...admin } });
    t.equal(r.statusCode, 302, url);
    t.equal(r.headers.location, to, `${url} -> ${to}`);
  }
  for (const url of ['/login', '/api/auth/login', '/api/auth/login?error=denied']) {
    const r = await app.inject({ url, headers: asHtml });
    t.equal(r.statusCode, 200, url);
    t.match(r.body, /<div id="app">/, `${url} answers a browser with the console (its login page)`);
    t.ok(r.headers['content-security-policy']);
  }
  // Without Accept: text/html (scripts, curl), the server-rendered pages are unchanged.
  const dash = await app.inject({ url: '/api/', headers: admin });
  t.equal(dash.statusCode, 200);
  t.match(dash.body, /<h1>MCP servers<\/h1>/);
  const login = await app.inject({ url: '/login' });
  t.match(login.body, /<form method="post" action="\/api\/auth\/login">/);
  // The form POSTs are not touched.
  const post = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { ...asHtml, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'username=admin&password=wrong',
  });
  t.equal(post.statusCode, 401);
  t.match(post.body, /Invalid username or password/);
});

t.test('on the platform surface alone the console is served too', async (t) => {
  const app = await makeApp(t, {}, { surfaces: ['platform'] });
  t.equal((await app.inject({ url: '/ui/' })).statusCode, 200);
  const home = await app.inject({ url: '/', headers: asHtml });
  t.equal(home.headers.location, '/ui/');
});

t.test('a current dist/ui is served as built; a stale one is bundled again in memory', async (t) => {
  const { writeUi } = await import('../../scripts/build-ui.mjs');
  const { ConsoleAssets, ROOT } = await import('../../plugins/console/assets.ts');
  const dir = join(tempDir('sb-console-dist-'), 'ui');
  await writeUi(ROOT, dir);
  const built = await new ConsoleAssets(ROOT, dir).get();
  t.equal(built.source, 'dist', 'a bundle whose sources are unchanged is read from disk');
  // A source edited after the build (its recorded mtime no longer matches) makes the bundle stale.
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  const first = Object.keys(manifest.inputs)[0];
  manifest.inputs[first] -= 1000;
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  const fresh = await new ConsoleAssets(ROOT, dir).get();
  t.equal(fresh.source, 'memory', 'a stale dist/ui is not served');
  t.equal(fresh.js, built.js, 'the same sources give the same content hash');
});
