import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { NGINX_BIN, nginxConf } from '../scripts/cluster-nginx.mjs';
import { adminBasic, startCluster } from '../test/cluster/cluster.ts';
import { freePort } from '../test/fixtures/free-port.ts';
import { load, median, type BenchModule, type BenchRow } from './harness.ts';
import { stopChild } from './processes.ts';

/**
 * Scale-out through nginx: the registry list (GET /api/servers, 50 servers)
 * and /validate with a bearer token, against two replicas behind nginx and
 * against one of the same replicas behind a second nginx, in alternating rounds
 * on one Redis. Also the replicas' CPU time per request (utime + stime from
 * /proc, both replicas summed), which says what a machine with more cores
 * would give: on 2 shared cores a second replica only competes for the same
 * CPU, so no gain in req/s is expected there.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TICK_MS = 10; // USER_HZ is 100 on Linux

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // Fields 14 and 15 of stat (utime, stime) are 12 and 13 after the command name.
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

const bench: BenchModule = async () => {
  const teardowns: Array<() => unknown> = [];
  const t = { teardown: (fn: () => unknown) => void teardowns.push(fn) };
  let single: ChildProcess | undefined;
  try {
    const c = await startCluster(t, { config: { registry: { health: { interval_seconds: 0 } } } });
    // A second nginx in front of replica 0 alone: the 1-replica baseline on the same processes.
    const port = await freePort();
    const dir = join(c.dir, 'nginx-single');
    mkdirSync(dir);
    writeFileSync(join(dir, 'nginx.conf'), nginxConf({ dir, port, upstreams: [c.replicas[0]!.port] }));
    single = spawn(NGINX_BIN, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' });
    const singleBase = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`${singleBase}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const json = { 'content-type': 'application/json', ...adminBasic };
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${c.base}/api/servers/register`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          server_name: `bench-${i}`,
          description: 'cluster bench',
          path: `/bench-${i}`,
          proxy_pass_url: 'http://127.0.0.1:9/mcp',
        }),
      });
      if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
    }
    const minted = await fetch(`${c.base}/api/tokens/generate`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ requested_scopes: ['mcp-registry-admin'] }),
    });
    const token = ((await minted.json()) as { access_token: string }).access_token;
    const bearer = { authorization: `Bearer ${token}` };
    const routes = [
      { name: 'registry list (50 servers)', path: '/api/servers', headers: bearer },
      {
        name: '/validate',
        path: '/validate',
        headers: { ...bearer, 'x-original-url': `${c.base}/bench-1/mcp`, 'x-original-method': 'POST' },
      },
    ];
    for (const r of routes) {
      const res = await fetch(`${c.base}${r.path}`, { headers: r.headers });
      if (res.status !== 200) throw new Error(`${r.path} answered ${res.status}: ${await res.text()}`);
    }

    const pids = c.replicas.map((r) => r.child.pid!);
    const rows: BenchRow[] = [];
    for (const r of routes) {
      let errors = 0;
      const runs: Record<'one' | 'two', Array<{ rps: number; p50: number; p99: number; cpu: number }>> = {
        one: [],
        two: [],
      };
      // The same concurrency per replica (20 connections each): with 20 in all, each of two replicas
      // gets half as many requests per event-loop wake and spent ~2x the CPU per request on the
      // wake-ups and syscalls (see bench/RESULTS.md notes), which is the load's shape, not the replicas'.
      const measure = async (base: string, replicas: number) => {
        const before = pids.map(cpuMs);
        const res = await load({ url: `${base}${r.path}`, headers: r.headers, connections: 20 * replicas });
        const cpu = pids.map(cpuMs).reduce((s, v, i) => s + v - before[i]!, 0);
        const duration = Number(process.env.BENCH_DURATION ?? 5);
        // A connection cut at the end of a load is not the service's fault; more than a handful is.
        if (res.non2xx || res.errors > res.rps * duration * 0.001)
          throw new Error(`${r.path}: ${res.errors} errors, ${res.non2xx} non-2xx`);
        errors += res.errors;
        return { rps: res.rps, p50: res.p50_ms, p99: res.p99_ms, cpu: cpu / (res.rps * duration) };
      };
      await load({ url: `${c.base}${r.path}`, headers: r.headers, duration: 2 }); // warm-up, both replicas
      for (let i = 0; i < ROUNDS; i++) {
        runs.one.push(await measure(singleBase, 1));
        runs.two.push(await measure(c.base, 2));
      }
      const med = (xs: typeof runs.one) => ({
        rps: median(xs.map((x) => x.rps)),
        p50: median(xs.map((x) => x.p50)),
        p99: median(xs.map((x) => x.p99)),
        cpu: median(xs.map((x) => x.cpu)),
      });
      const one = med(runs.one);
      const two = med(runs.two);
      const ratio = median(runs.two.map((x, i) => x.rps / runs.one[i]!.rps));
      rows.push({
        group: 'cluster',
        name: `${r.name} via nginx, 1 replica`,
        rps: one.rps,
        p50_ms: one.p50,
        p99_ms: one.p99,
        ratio: 1,
        note: `baseline, 20 connections; replica CPU ${one.cpu.toFixed(2)} ms/request`,
      });
      // CPU-bound: req/s scales with cores until nginx or Redis is the limit, so with free cores
      // two replicas give up to cores / (CPU ms per request) requests per second in all.
      const cores = availableParallelism();
      rows.push({
        group: 'cluster',
        name: `${r.name} via nginx, 2 replicas`,
        rps: two.rps,
        p50_ms: two.p50,
        p99_ms: two.p99,
        ratio,
        note:
          `median of ${ROUNDS} paired rounds on ${cores} cores, 40 connections (20 per replica); replica CPU ${two.cpu.toFixed(2)} ms/request; ` +
          `CPU-bound ceiling at that cost: ${Math.round((1000 / two.cpu) * 2)} req/s with 2 cores free for the replicas, ` +
          `${Math.round((1000 / two.cpu) * 4)} with 4` +
          (errors ? `; ${errors} connection errors in all rounds` : ''),
      });
    }
    return rows;
  } finally {
    if (single) await stopChild(single);
    for (const fn of teardowns.reverse()) await fn();
  }
};

export default bench;
