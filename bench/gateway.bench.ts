import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { Client } from 'undici';
import { mintSelfToken } from '../plugins/registry/auth/self-tokens.ts';
import { load, median, percentiles, type BenchModule, type BenchRow, type LoadResult } from './harness.ts';
import { MCP_ADD_BACKEND as BACKEND } from './mcp-backend.ts';
import { startScript, startSwitchboard, type Spawned } from './processes.ts';

const ACCEPT = 'application/json, text/event-stream';

/** initialize + notifications/initialized once; returns the session id to reuse under load. */
async function session(url: string, extra: Record<string, string>): Promise<string> {
  const headers = { 'content-type': 'application/json', accept: ACCEPT, ...extra };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  const sid = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !sid)
    throw new Error(`initialize at ${url} answered ${init.status}: ${await init.text()}`);
  await init.text();
  const ack = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await ack.text();
  return sid;
}

const CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'add', arguments: { a: 20, b: 22 } },
});

async function checkCall(url: string, headers: Record<string, string>): Promise<void> {
  const r = await fetch(url, { method: 'POST', headers, body: CALL });
  const text = await r.text();
  if (r.status !== 200 || !text.includes('"42"'))
    throw new Error(`tools/call at ${url} answered ${r.status}: ${text.slice(0, 200)}`);
}

/** CPU seconds (user + system) a child has used so far, from /proc; undefined off Linux. */
function cpuSeconds(pid: number | undefined): number | undefined {
  const file = `/proc/${pid}/stat`;
  if (pid === undefined || !existsSync(file)) return undefined;
  // Fields after the command name; utime and stime are the 12th and 13th of them, in clock ticks (100 Hz).
  const f = readFileSync(file, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(f[11]) + Number(f[12])) / 100;
}

interface Path {
  url: string;
  headers: Record<string, string>;
}

/**
 * Sequential calls on one keep-alive connection, timed one by one with a
 * sub-millisecond clock: autocannon's latency histogram counts whole
 * milliseconds, too coarse for "adds < 1 ms". Both paths go through this same client.
 */
async function sequential(p: Path, n: number): Promise<{ samples: number[]; seconds: number }> {
  const u = new URL(p.url);
  const client = new Client(u.origin, { pipelining: 1, keepAliveTimeout: 30_000 });
  const samples: number[] = [];
  const started = process.hrtime.bigint();
  try {
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      const res = await client.request({ path: u.pathname, method: 'POST', headers: p.headers, body: CALL });
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`tools/call at ${p.url} answered ${res.statusCode}: ${text.slice(0, 200)}`);
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  } finally {
    await client.close();
  }
  return { samples, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** CPU per call of the backend and of Switchboard over the 10-connection rounds of one path (microseconds). */
interface CpuCost {
  backend?: number;
  switchboard?: number;
}

/**
 * `tools/call` of a fast tool through the built-in MCP gateway against the same
 * call made directly to the backend, in one run (the direct call is the baseline).
 *
 * Fairness: one backend process serves both paths; the direct baseline sends
 * what the gateway forwards (same headers, its own MCP session, as the gateway
 * has one); the same client drives both; and the two are measured in
 * alternating rounds (direct first, then gateway first) so a burst of load from
 * elsewhere on the machine hits both. Each path keeps its best round: on a
 * shared machine the best round is the one least disturbed by others; the
 * per-round ratios and their median are in the note. The CPU each process
 * spends per call (from /proc) is the contention-proof figure: when other work
 * saturates the cores, req/s ratios drift towards the ratio of CPU per call of
 * the two paths, whatever the gateway's latency.
 */
const bench: BenchModule = async () => {
  const secretKey = randomBytes(32).toString('base64url');
  let backend: Spawned | undefined;
  let sb: Spawned | undefined;
  try {
    backend = await startScript(BACKEND, '/healthz');
    sb = await startSwitchboard(
      { registry: { health: { interval_seconds: 0 } } },
      { SECRET_KEY: secretKey, ADMIN_PASSWORD: randomBytes(12).toString('hex') },
    );
    const token = await mintSelfToken(new TextEncoder().encode(secretKey), {
      username: 'bench',
      groups: [],
      scopes: ['mcp-registry-admin'],
      expiresInSeconds: 3600,
    });
    const reg = await fetch(`${sb.base}/api/servers/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Fast', description: 'bench backend', path: '/fast', proxy_pass_url: backend.base }),
    });
    if (reg.status !== 201) throw new Error(`register answered ${reg.status}: ${await reg.text()}`);

    const directUrl = `${backend.base}/mcp`;
    const gatewayUrl = `${sb.base}/fast/mcp`;
    const auth = { 'x-authorization': `Bearer ${token}` };
    const direct: Path = {
      url: directUrl,
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': await session(directUrl, {}) },
    };
    const gateway: Path = {
      url: gatewayUrl,
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        ...auth,
        'mcp-session-id': await session(gatewayUrl, auth),
      },
    };
    await checkCall(direct.url, direct.headers);
    await checkCall(gateway.url, gateway.headers);

    const rounds = Number(process.env.BENCH_GATEWAY_ROUNDS ?? 5);
    const pids = { backend: backend.child.pid, switchboard: sb.child.pid };

    // Warm both paths (JIT, connection pools) before measuring.
    await sequential(direct, 500);
    await sequential(gateway, 500);
    await load({ url: direct.url, method: 'POST', headers: direct.headers, body: CALL, duration: 1 });
    await load({ url: gateway.url, method: 'POST', headers: gateway.headers, body: CALL, duration: 1 });

    // One connection: latency. Samples of all rounds are pooled; the rounds alternate the order.
    const seq = { direct: { samples: [] as number[], seconds: 0 }, gateway: { samples: [] as number[], seconds: 0 } };
    for (let i = 0; i < rounds * 2; i++) {
      for (const name of i % 2 === 0 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const)) {
        const r = await sequential(name === 'direct' ? direct : gateway, 1000);
        seq[name].samples.push(...r.samples);
        seq[name].seconds += r.seconds;
      }
    }
    const one = (name: 'direct' | 'gateway'): LoadResult => {
      const { p50, p99 } = percentiles(seq[name].samples);
      return { rps: seq[name].samples.length / seq[name].seconds, p50_ms: p50, p99_ms: p99, errors: 0, non2xx: 0 };
    };
    const direct1 = one('direct');
    const gateway1 = one('gateway');

    // Ten connections: throughput, best round of each path; paired ratios per round; CPU per call over all rounds.
    const best: Record<'direct' | 'gateway', LoadResult | undefined> = { direct: undefined, gateway: undefined };
    const spent = {
      direct: { backend: 0, switchboard: 0, calls: 0 },
      gateway: { backend: 0, switchboard: 0, calls: 0 },
    };
    const paired: number[] = [];
    let cpuKnown = true;
    for (let i = 0; i < rounds; i++) {
      const round: Partial<Record<'direct' | 'gateway', number>> = {};
      for (const name of i % 2 === 0 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const)) {
        const p = name === 'direct' ? direct : gateway;
        const b0 = cpuSeconds(pids.backend);
        const s0 = cpuSeconds(pids.switchboard);
        const t0 = process.hrtime.bigint();
        const r = await load({ url: p.url, method: 'POST', headers: p.headers, body: CALL, connections: 10 });
        const b1 = cpuSeconds(pids.backend);
        const s1 = cpuSeconds(pids.switchboard);
        if (b0 === undefined || b1 === undefined || s0 === undefined || s1 === undefined) cpuKnown = false;
        else {
          spent[name].backend += b1 - b0;
          spent[name].switchboard += s1 - s0;
          spent[name].calls += (r.rps * Number(process.hrtime.bigint() - t0)) / 1e9;
        }
        round[name] = r.rps;
        if (!best[name] || r.rps > best[name].rps) best[name] = r;
      }
      if (round.direct) paired.push((round.gateway ?? 0) / round.direct);
    }
    const perCall = (name: 'direct' | 'gateway'): CpuCost =>
      cpuKnown && spent[name].calls
        ? {
            backend: (spent[name].backend * 1e6) / spent[name].calls,
            switchboard: (spent[name].switchboard * 1e6) / spent[name].calls,
          }
        : {};
    const mid = median(paired);
    const direct10 = best.direct!;
    const gateway10 = best.gateway!;

    const errs = (r: LoadResult) => (r.errors || r.non2xx ? `${r.errors} errors, ${r.non2xx} non-2xx` : '');
    const cpuNote = (c: CpuCost) =>
      c.backend === undefined
        ? ''
        : `CPU per call: backend ${c.backend.toFixed(0)} us${c.switchboard && c.switchboard > 5 ? `, Switchboard ${c.switchboard.toFixed(0)} us` : ''}`;
    const row = (name: string, r: LoadResult, base: LoadResult, goal: string, note: string): BenchRow => ({
      group: 'gateway',
      name,
      rps: r.rps,
      p50_ms: r.p50_ms,
      p99_ms: r.p99_ms,
      ratio: base.rps ? r.rps / base.rps : undefined,
      goal,
      note: [note, errs(r)].filter(Boolean).join('; ') || undefined,
    });
    const added = gateway1.p50_ms - direct1.p50_ms;
    const n1 = seq.direct.samples.length;
    return [
      row(
        'tools/call direct to the backend (baseline, 1 connection)',
        direct1,
        direct1,
        'baseline',
        `${n1} sequential calls, sub-ms timing`,
      ),
      row(
        'tools/call through the gateway (1 connection)',
        gateway1,
        direct1,
        'adds < 1 ms at p50',
        `adds ${added.toFixed(2)} ms at p50: ${added < 1 ? 'met' : 'NOT met'}`,
      ),
      row(
        'tools/call direct to the backend (baseline, 10 connections)',
        direct10,
        direct10,
        'baseline',
        [`best of ${rounds} rounds`, cpuNote(perCall('direct'))].filter(Boolean).join('; '),
      ),
      {
        ...row(
          'tools/call through the gateway (10 connections)',
          gateway10,
          direct10,
          '>= 0.8x direct req/s',
          [
            `${mid >= 0.8 ? 'met' : 'NOT met'}: median of ${rounds} paired rounds (${paired.map((x) => x.toFixed(2)).join(', ')}); req/s of the best round`,
            cpuNote(perCall('gateway')),
          ]
            .filter(Boolean)
            .join('; '),
        ),
        ratio: mid,
      },
    ];
  } finally {
    sb?.stop();
    backend?.stop();
  }
};

export default bench;
