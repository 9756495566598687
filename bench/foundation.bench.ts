import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RECORD, startBare } from './bare-baseline.ts';
import { load, median, percentiles, type BenchModule, type BenchRow, type LoadResult } from './harness.ts';
// npm start is `node scripts/build.mjs && node dist/switchboard.js`: the build runs once, before any clock.
import { buildOnce, freePort, ROOT, stopChild as stop, waitHealthy } from './processes.ts';

/** Switchboard as `npm start` runs it (both surfaces, SQLite store), timed from spawn to the first /healthz 200. */
async function startSwitchboard(): Promise<{ base: string; child: ChildProcess; readyMs: number }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-foundation-'));
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'dist/switchboard.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir,
      LOG_LEVEL: 'warn',
      REDIS_URL: '',
      SWITCHBOARD_CONFIG: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(`${base}/healthz`, child, 5);
  return { base, child, readyMs: performance.now() - t0 };
}

/**
 * CPU time (user + system, all threads) the process has used, from
 * /proc/<pid>/stat in clock ticks (USER_HZ, 100 on Linux). Unlike wall time
 * it hardly moves when other work shares the machine's cores.
 */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const bench: BenchModule = async () => {
  const rows: BenchRow[] = [];
  buildOnce();

  // Ready-to-serve, three cold starts; idle RSS of the last one after it settles.
  const readies: number[] = [];
  const cpus: number[] = [];
  let rss = NaN;
  for (let i = 0; i < 3; i++) {
    const s = await startSwitchboard();
    readies.push(s.readyMs);
    cpus.push(cpuMs(s.child.pid!));
    if (i === 2) {
      await new Promise((r) => setTimeout(r, 2000));
      rss = rssMb(s.child.pid!);
    }
    await stop(s.child);
  }
  const ready = percentiles(readies);

  const bare = await startBare();
  const sb = await startSwitchboard();
  try {
    const put = await fetch(`${sb.base}/api/v1/memory/bench`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-memory': 'in_memory' },
      body: JSON.stringify({ key: RECORD.key, content: RECORD.content, metadata: RECORD.metadata }),
    });
    if (put.status !== 201) throw new Error(`storing the bench record answered ${put.status}: ${await put.text()}`);
    const retrieveHeaders = { 'x-provider-memory': 'in_memory' };
    const check = await fetch(`${sb.base}/api/v1/memory/bench/k1`, { headers: retrieveHeaders });
    if (check.status !== 200) throw new Error(`memory retrieve answered ${check.status}: ${await check.text()}`);

    // Warm both JITs, then measure back to back.
    await load({ url: bare.url, duration: 1 });
    await load({ url: `${sb.base}/api/v1/memory/bench/k1`, headers: retrieveHeaders, duration: 1 });
    // Rounds, best of each: the machine is shared, and a burst of someone else's
    // work during one target's only window would skew its ratio.
    const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
    const best = (a: LoadResult | undefined, b: LoadResult) => (a && a.rps >= b.rps ? a : b);
    let base: LoadResult | undefined;
    let health: LoadResult | undefined;
    let retrieve: LoadResult | undefined;
    // Each round's own retrieve/baseline ratio too: the two loads of a round are seconds apart,
    // so their ratio is less exposed to other work than the best-of figures are.
    const paired: number[] = [];
    // Server CPU per request (from /proc, summed over the rounds): what each request costs the
    // server itself, whatever else shares the cores; bare/ours is the req/s ratio on an idle core.
    const seconds = Number(process.env.BENCH_DURATION ?? 5);
    const cpu = { bare: { ms: 0, reqs: 0 }, sb: { ms: 0, reqs: 0 } };
    const measure = async (
      pid: number,
      tally: { ms: number; reqs: number },
      url: string,
      headers?: Record<string, string>,
    ) => {
      const c0 = cpuMs(pid);
      const r = await load({ url, headers });
      tally.ms += cpuMs(pid) - c0;
      tally.reqs += r.rps * seconds;
      return r;
    };
    const measureBare = () => measure(bare.child.pid!, cpu.bare, bare.url);
    const measureRetrieve = () => measure(sb.child.pid!, cpu.sb, `${sb.base}/api/v1/memory/bench/k1`, retrieveHeaders);
    for (let i = 0; i < rounds; i++) {
      // The pair back to back, in turn one and the other first, so drift of the shared machine
      // (other tenants, a slow stretch) falls on both sides of a ratio alike.
      let b: LoadResult;
      let r: LoadResult;
      if (i % 2 === 0) {
        b = await measureBare();
        r = await measureRetrieve();
      } else {
        r = await measureRetrieve();
        b = await measureBare();
      }
      base = best(base, b);
      retrieve = best(retrieve, r);
      paired.push(r.rps / b.rps);
      health = best(health, await load({ url: `${sb.base}/healthz` }));
    }
    const mid = median(paired);
    const usBare = (cpu.bare.ms * 1000) / cpu.bare.reqs;
    const usSb = (cpu.sb.ms * 1000) / cpu.sb.reqs;
    if (!base || !health || !retrieve) throw new Error('BENCH_ROUNDS must be at least 1');
    const group = 'foundation';
    const errs = (r: typeof base) => (r.errors || r.non2xx ? `${r.errors} errors, ${r.non2xx} non-2xx` : undefined);
    rows.push(
      {
        group,
        name: 'bare Fastify, same JSON (baseline)',
        rps: base.rps,
        p50_ms: base.p50_ms,
        p99_ms: base.p99_ms,
        ratio: 1,
        note: errs(base),
      },
      {
        group,
        name: 'GET /healthz',
        rps: health.rps,
        p50_ms: health.p50_ms,
        p99_ms: health.p99_ms,
        ratio: health.rps / base.rps,
        note: errs(health),
      },
      {
        group,
        name: 'GET /api/v1/memory/{ns}/{key} (X-Provider-Memory: in_memory)',
        rps: retrieve.rps,
        p50_ms: retrieve.p50_ms,
        p99_ms: retrieve.p99_ms,
        ratio: mid,
        goal: '>= 0.8x',
        note:
          errs(retrieve) ??
          `${mid >= 0.8 ? 'met' : 'NOT met'}: median of ${rounds} paired rounds, alternating which goes first (${paired.map((x) => x.toFixed(2)).join(', ')}); req/s and latency of its best round; ` +
            `server CPU per request ${usSb.toFixed(1)} µs vs bare ${usBare.toFixed(1)} µs = ${(usBare / usSb).toFixed(2)}x`,
      },
      {
        group: 'foundation: startup',
        name: 'ready to serve (spawn -> first /healthz 200, 3 runs)',
        p50_ms: ready.p50,
        p99_ms: Math.max(...readies),
        goal: '< 1000 ms',
        note: `runs: ${readies.map((r) => r.toFixed(0)).join(', ')} ms (CPU to ready ${cpus.join(', ')} ms); node dist/switchboard.js, built once before (npm start builds first when a source changed, ~0.2-0.6 s)`,
      },
      {
        group: 'foundation: startup',
        name: 'idle RSS (2 s after ready)',
        goal: '< 120 MB',
        note: `${rss.toFixed(1)} MB`,
      },
    );
  } finally {
    await stop(sb.child);
    await stop(bare.child);
  }
  return rows;
};

export default bench;
