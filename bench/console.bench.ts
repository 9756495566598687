import { gzipSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import { findChromium } from '../providers/chromium/options.ts';
import { median, type BenchModule, type BenchRow } from './harness.ts';
import { startSwitchboard } from './processes.ts';

/**
 * The web console (issue 20): first meaningful paint of the servers page with 1,000 servers in headless
 * Chromium (goal < 1 s), against the bare server-rendered /api/ page listing the same 1,000 servers, measured
 * side by side in one run; and the size of the console's JS + CSS gzipped (goal < 200 KB).
 *
 * "Meaningful" = the first screen of the table (50 rows) is in the page; the time until all 1,000 rows are is a
 * row of its own. Both are timed inside the page (performance.now() from navigation start, sampled every
 * animation frame). Each visit is a new browser context: nothing cached, the first visit of a user. The server
 * is `npm start`'s build (dist/, dist/ui), as deployed.
 */
const SERVERS = 1000;
const ROUNDS = Number(process.env.BENCH_CONSOLE_ROUNDS ?? 7);
const PASSWORD = 'bench-console-password';

async function seed(base: string): Promise<void> {
  const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
  let next = 0;
  const worker = async () => {
    while (next < SERVERS) {
      const i = next++;
      const r = await fetch(`${base}/api/servers/register`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: `Server ${i}`,
          path: `/bench-${String(i).padStart(4, '0')}`,
          description: `Bench server number ${i} with a description of ordinary length for a table row`,
          // One backend URL each: the scan results are stored per URL (and written concurrently here).
          proxy_pass_url: `http://127.0.0.1:9/${i}`,
          tags: ['bench', `group-${i % 10}`],
        }),
      });
      if (r.status !== 201) throw new Error(`register ${i}: ${r.status} ${await r.text()}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

async function sessionCookie(base: string): Promise<Array<{ name: string; value: string; url: string }>> {
  const r = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  return r.headers.getSetCookie().map((c) => {
    const [pair] = c.split(';');
    const eq = pair.indexOf('=');
    return { name: pair.slice(0, eq), value: pair.slice(eq + 1), url: base };
  });
}

/** A first screen of the table: what a 900-pixel-high window shows of it, with room to spare. */
const FIRST_SCREEN = 50;

/**
 * ms from navigation start until the first screen of table rows (matching `selector`) is in the page, and
 * until all `rows` are, for a fresh context.
 */
async function paint(
  browser: Browser,
  base: string,
  url: string,
  selector: string,
  rows: number,
): Promise<{ first: number; all: number }> {
  // The bare page goes to the console for a browser that prefers text/html: the baseline visit says it takes
  // anything, as a script would, and gets the server-rendered table.
  const bare = url.startsWith('/api/');
  const context = await browser.newContext({
    viewport: { width: 1360, height: 900 },
    extraHTTPHeaders: bare ? { accept: '*/*' } : {},
  });
  try {
    await context.addCookies(await sessionCookie(base));
    const page = await context.newPage();
    await page.goto(`${base}${url}`, { waitUntil: 'commit', timeout: 120_000 });
    const handle = await page.waitForFunction(
      ([sel, first, n]) => {
        const count = document.querySelectorAll(sel as string).length;
        const w = window as unknown as { firstScreenAt?: number };
        if (count >= (first as number) && w.firstScreenAt === undefined) w.firstScreenAt = performance.now();
        return count >= (n as number) ? { first: w.firstScreenAt!, all: performance.now() } : false;
      },
      [selector, FIRST_SCREEN, rows] as const,
      { polling: 'raf', timeout: 120_000 },
    );
    return (await handle.jsonValue()) as { first: number; all: number };
  } finally {
    await context.close();
  }
}

const run: BenchModule = async () => {
  const executablePath = findChromium();
  if (!executablePath) return [{ group: 'console', name: '(skipped)', note: 'no Chromium on this machine' }];
  const sb = await startSwitchboard({ registry: { health: { interval_seconds: 0 } } }, { ADMIN_PASSWORD: PASSWORD });
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    await seed(sb.base);
    const index = await (await fetch(`${sb.base}/ui/`)).text();
    const assets = [...index.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]);
    let gz = 0;
    for (const a of assets) gz += gzipSync(Buffer.from(await (await fetch(`${sb.base}${a}`)).arrayBuffer())).length;

    // One warm-up of each (Chromium's own first start), then alternating rounds so load drifts hit both.
    await paint(browser, sb.base, '/api/', 'tbody tr', SERVERS);
    await paint(browser, sb.base, '/ui/servers', 'tr[data-path]', SERVERS);
    const bare: Array<{ first: number; all: number }> = [];
    const con: Array<{ first: number; all: number }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      bare.push(await paint(browser, sb.base, '/api/', 'tbody tr', SERVERS));
      con.push(await paint(browser, sb.base, '/ui/servers', 'tr[data-path]', SERVERS));
    }
    const m = (xs: Array<{ first: number; all: number }>, k: 'first' | 'all') => median(xs.map((x) => x[k]));
    const runs = (xs: Array<{ first: number; all: number }>, k: 'first' | 'all') =>
      xs.map((x) => Math.round(x[k])).join('/');
    const rows: BenchRow[] = [
      {
        group: 'console',
        name: `bare /api/ HTML page, ${SERVERS} servers: first ${FIRST_SCREEN} rows (baseline)`,
        p50_ms: m(bare, 'first'),
        ratio: 1,
        note: `median of ${ROUNDS}, fresh context each; runs ${runs(bare, 'first')} ms`,
      },
      {
        group: 'console',
        name: `console servers page, ${SERVERS} servers: first meaningful paint (first ${FIRST_SCREEN} rows)`,
        p50_ms: m(con, 'first'),
        ratio: m(con, 'first') / m(bare, 'first'),
        goal: m(con, 'first') < 1000 ? '< 1 s: met' : '< 1 s: NOT met',
        note: `median of ${ROUNDS}; runs ${runs(con, 'first')} ms`,
      },
      {
        group: 'console',
        name: `bare /api/ HTML page: all ${SERVERS} rows`,
        p50_ms: m(bare, 'all'),
        note: `runs ${runs(bare, 'all')} ms`,
      },
      {
        group: 'console',
        name: `console servers page: all ${SERVERS} rows`,
        p50_ms: m(con, 'all'),
        ratio: m(con, 'all') / m(bare, 'all'),
        goal: 'informational',
        note: `runs ${runs(con, 'all')} ms`,
      },
      {
        group: 'console',
        name: 'console JS + CSS, gzipped',
        goal: gz < 200 * 1024 ? '< 200 KB: met' : '< 200 KB: NOT met',
        note: `${(gz / 1024).toFixed(1)} KB (${assets.length} files)`,
      },
    ];
    return rows;
  } finally {
    await browser.close();
    await sb.stop();
  }
};

export default run;
