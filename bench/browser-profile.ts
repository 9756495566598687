import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { type Browser, chromium } from 'playwright-core';
import { startEgressProxy } from '../providers/chromium/egress-proxy.ts';
import { findChromium } from '../providers/chromium/options.ts';
import { listenLoopback } from '../test/fixtures/loopback.ts';
import { percentiles } from './harness.ts';

/**
 * Where the time of a browser session goes, phase by phase, on playwright-core directly (no HTTP, no provider):
 * `npx tsx bench/browser-profile.ts`. Not a bench row (bench/browser.bench.ts is); the breakdown behind
 * docs/browser.md "Performance". CHROMIUM_PATH picks the binary (default: what the provider finds),
 * PROFILE_NO_PROXY=1 drops the egress proxy, PROFILE_ARGS adds Chromium flags, BENCH_SAMPLES sets the count.
 */
const N = Number(process.env.BENCH_SAMPLES ?? 30);
const BIN = findChromium();
if (!BIN) throw new Error('no Chromium binary');

const site = await listenLoopback(
  createServer((_q, r) =>
    r.writeHead(200, { 'content-type': 'text/html' }).end('<title>bench</title><p>small local page</p>'),
  ),
);
const proxy = await startEgressProxy({ allowPrivateNetworks: true, allowedHosts: [], blockedHosts: [] }, () => {});

const samples = new Map<string, number[]>();
async function time<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const v = await fn();
  const list = samples.get(name) ?? [];
  list.push(performance.now() - t0);
  samples.set(name, list);
  return v;
}

// The provider's flags (providers/chromium/browser-host.ts).
const args = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  ...(process.env.PROFILE_NO_PROXY ? [] : [`--proxy-server=${proxy.url}`, '--proxy-bypass-list=<-loopback>']),
  ...(process.env.PROFILE_ARGS ?? '').split(' ').filter(Boolean),
];
const launch = () => chromium.launch({ executablePath: BIN, headless: true, args });

/** Resident and proportional memory of this process's descendants, in MB (PSS splits shared pages fairly). */
function memory(): { rss: number; pss: number; renderers: number } {
  const pids = [process.pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      const out = execFileSync('pgrep', ['-P', String(pids[i])], { encoding: 'utf8' });
      pids.push(...out.trim().split('\n').filter(Boolean).map(Number));
    } catch {
      // no children
    }
  }
  let rss = 0;
  let pss = 0;
  let renderers = 0;
  for (const pid of pids.slice(1)) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024;
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024;
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) renderers++;
    } catch {
      // gone meanwhile (pgrep itself)
    }
  }
  return { rss, pss, renderers };
}

let b: Browser | undefined;
for (let i = 0; i < 3; i++) {
  const next = await time('launch', launch);
  if (b) await b.close();
  b = next;
}
const browser = b!;

// Session start: what POST /sessions does when no context waits in the pool.
for (let i = 0; i < N; i++) {
  const ctx = await time('start: newContext', () =>
    browser.newContext({ viewport: { width: 1280, height: 720 }, acceptDownloads: false, serviceWorkers: 'block' }),
  );
  const page = await time('start: newPage (a renderer process)', () => ctx.newPage());
  await time('start: newCDPSession + Page.getFrameTree', async () =>
    (await ctx.newCDPSession(page)).send('Page.getFrameTree'),
  );
  await time('start: setViewportSize (a pooled page, other size)', () =>
    page.setViewportSize({ width: 800, height: 600 }),
  );
  await time('stop: context.close', () => ctx.close());
}

// Navigate + content on one page.
const ctx = await browser.newContext({ viewport: { width: 1280, height: 720 } });
const page = await ctx.newPage();
const cdp = await ctx.newCDPSession(page);
const frameId = (await cdp.send('Page.getFrameTree')).frameTree.frame.id;
const isolated = async (expression: string) => {
  const { executionContextId } = await cdp.send('Page.createIsolatedWorld', { frameId, worldName: 'profile' });
  return cdp.send('Runtime.evaluate', { expression, contextId: executionContextId, returnByValue: true });
};
for (let i = 0; i < N; i++) {
  const response = await time('nav: goto waitUntil load', () => page.goto(site, { waitUntil: 'load' }));
  await time('nav: response.headerValue (refusal header)', async () => response?.headerValue('x-test'));
  await time('nav: page.title() (utility world)', () => page.title());
  await time('content: page.content() (injects its script)', () => page.content());
  await page.goto(site, { waitUntil: 'load' });
  await time('nav: title in an isolated world (CDP)', () => isolated('document.title'));
  await time('content: outerHTML in an isolated world (CDP)', () => isolated('document.documentElement.outerHTML'));
  await page.goto(site, { waitUntil: 'load' });
  await time('content: page.evaluate in the main world', () => page.evaluate(() => document.documentElement.outerHTML));
  await time('nav: goto waitUntil commit', () => page.goto(site, { waitUntil: 'commit' }));
  await page.waitForLoadState('load');
  await time('baseline: fetch the page directly', async () => (await fetch(site)).text());
}
await ctx.close();

// Memory one idle session costs: 10 contexts, each with a page on the small site.
await new Promise((r) => setTimeout(r, 1000));
const before = memory();
const idle = [];
for (let i = 0; i < 10; i++) {
  const c = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  await (await c.newPage()).goto(site);
  idle.push(c);
}
await new Promise((r) => setTimeout(r, 1000));
const after = memory();
for (const c of idle) await c.close();
await browser.close();
await proxy.close();

console.log(
  `binary ${BIN}${process.env.PROFILE_NO_PROXY ? ', no proxy' : ''}; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
);
for (const [name, list] of samples) {
  const p = percentiles(list);
  console.log(`${name.padEnd(52)} p50 ${p.p50.toFixed(1).padStart(7)} ms  p99 ${p.p99.toFixed(1).padStart(7)} ms`);
}
const per = (k: 'rss' | 'pss' | 'renderers') => ((after[k] - before[k]) / idle.length).toFixed(1);
console.log(`idle session: ${per('renderers')} renderer processes, RSS ${per('rss')} MB, PSS ${per('pss')} MB each`);
process.exit(0);
