import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { listenLoopback } from '../test/fixtures/loopback.ts';
import { percentiles, type BenchModule, type BenchRow } from './harness.ts';
import { startSwitchboard } from './processes.ts';

const json = { 'content-type': 'application/json' };

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}

/** Resident memory of a process tree (Switchboard and its Chromium children), in MB, from /proc. */
function treeRssMb(pid: number): number {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      pids.push(
        ...execFileSync('pgrep', ['-P', String(pids[i])], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .filter(Boolean)
          .map(Number),
      );
    } catch {
      // no children
    }
  }
  let kb = 0;
  for (const p of pids) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return kb / 1024;
}

/**
 * The chromium provider: session start on a warm browser, navigate + content of a small local page, and the
 * memory one more idle session costs. Baseline: the same local page fetched directly over HTTP.
 */
const run: BenchModule = async () => {
  const page = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>bench</title><p>small local page</p>'),
  );
  const site = await listenLoopback(page);
  const sb = await startSwitchboard({
    providers: {
      browser: {
        instances: { chromium: { type: 'chromium', options: { allow_private_networks: true, max_sessions: 64 } } },
      },
    },
  });
  const api = `${sb.base}/api/v1/browser/sessions`;
  const start = async () =>
    (await (await fetch(api, { method: 'POST', headers: json, body: '{}' })).json()).session_id as string;
  const stop = (id: string) => fetch(`${api}/${id}`, { method: 'DELETE' });
  try {
    const n = Number(process.env.BENCH_SAMPLES ?? 40);
    await stop(await start()); // launches Chromium: the rows below measure a warm browser

    const starts: number[] = [];
    for (let i = 0; i < n; i++) {
      const [ms, id] = await timed(start);
      starts.push(ms);
      await stop(id);
    }

    const id = await start();
    const direct: number[] = [];
    const navs: number[] = [];
    for (let i = 0; i < n; i++) {
      direct.push((await timed(async () => (await fetch(site)).text()))[0]);
      navs.push(
        (
          await timed(async () => {
            await fetch(`${api}/${id}/navigate`, {
              method: 'POST',
              headers: json,
              body: JSON.stringify({ url: site }),
            });
            return (await fetch(`${api}/${id}/content`)).json();
          })
        )[0],
      );
    }
    await stop(id);

    const before = treeRssMb(sb.child.pid!);
    const idle: string[] = [];
    for (let i = 0; i < 10; i++) {
      const s = await start();
      await fetch(`${api}/${s}/navigate`, { method: 'POST', headers: json, body: JSON.stringify({ url: site }) });
      idle.push(s);
    }
    await new Promise((r) => setTimeout(r, 1000));
    const perSession = (treeRssMb(sb.child.pid!) - before) / idle.length;
    for (const s of idle) await stop(s);

    const st = percentiles(starts);
    const d = percentiles(direct);
    const nv = percentiles(navs);
    const rows: BenchRow[] = [
      {
        group: 'browser',
        name: 'GET the small local page directly (baseline)',
        p50_ms: d.p50,
        p99_ms: d.p99,
        ratio: 1,
      },
      {
        group: 'browser',
        name: 'POST /browser/sessions on a warm browser',
        p50_ms: st.p50,
        p99_ms: st.p99,
        goal: 'p50 < 300 ms',
        note: `${st.p50 < 300 ? 'met' : 'NOT met'}; ${n} sequential starts, each stopped`,
      },
      {
        group: 'browser',
        name: 'navigate + content of the small local page',
        p50_ms: nv.p50,
        p99_ms: nv.p99,
        ratio: nv.p50 / d.p50,
        goal: 'p50 < 100 ms',
        note: `${nv.p50 < 100 ? 'met' : 'NOT met'}; through the egress proxy`,
      },
      {
        group: 'browser',
        name: 'RSS per idle session (10 sessions on one page each)',
        note: `${perSession.toFixed(1)} MB per session (Switchboard + Chromium tree)`,
      },
    ];
    return rows;
  } finally {
    await sb.stop();
    page.close();
  }
};

export default run;
