import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { load, median, type BenchModule, type BenchRow, type LoadResult } from './harness.ts';
import { startSwitchboard } from './processes.ts';

/**
 * Observability costs, side by side in one run:
 * - agent chat with auto_trace on the `store` provider vs the same chat with auto_trace off (goal >= 0.9x);
 * - with OTLP export to a dead collector (a port that accepts and never answers, the worst case: every
 *   export waits for its timeout) vs no export, for /llm/completions and for a traced agent chat.
 * Each comparison runs in rounds (the order of the loads reversed every other round) and is judged on the
 * median of per-round ratios. Beside req/s, each load reads the server's CPU time from /proc: on a shared,
 * oversubscribed machine req/s follows the neighbours, while CPU per request follows the code.
 */
const json = { 'content-type': 'application/json' };
const llm = {
  default: 'scripted',
  instances: { scripted: { type: 'scripted', options: { responses: [{ content: 'pong' }] } } },
};
const storeObs = (options: Record<string, unknown> = {}) => ({
  default: 'store',
  instances: { store: { type: 'store', options } },
});

/** The child's user + system CPU time in ms (Linux /proc; undefined elsewhere). */
function cpuMs(pid: number | undefined): number | undefined {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // clock ticks, USER_HZ 100
  } catch {
    return undefined;
  }
}

type Measured = LoadResult & { cpu_us?: number };

const loadAverage = (): string => {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return '?';
  }
};

/** A collector that is there but never answers: connections are accepted and left hanging. */
async function deadCollector() {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const bench: BenchModule = async () => {
  const dead = await deadCollector();
  const plain = await startSwitchboard(
    { providers: { llm, observability: storeObs() }, store: { backend: 'sqlite' } },
    {},
    { args: ['--surfaces', 'platform'] },
  );
  const exporting = await startSwitchboard(
    {
      providers: {
        llm,
        observability: storeObs({ otlp_endpoint: dead.url, otlp_timeout_ms: 5000, otlp_max_queue_size: 2048 }),
      },
      store: { backend: 'sqlite' },
    },
    {},
    { args: ['--surfaces', 'platform'] },
  );
  try {
    for (const sb of [plain, exporting]) {
      const mk = (spec: Record<string, unknown>) =>
        fetch(`${sb.base}/api/v1/agents`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ model: 'bench', ...spec }),
        });
      await mk({ name: 'traced', hooks: { auto_memory: false, auto_trace: true } });
      await mk({ name: 'untraced', hooks: { auto_memory: false, auto_trace: false } });
    }
    const message = JSON.stringify({ message: 'ping' });
    const completion = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'ping' }] });
    const duration = Number(process.env.BENCH_DURATION ?? 3);
    const post = async (sb: typeof plain, path: string, body: string): Promise<Measured> => {
      const before = cpuMs(sb.child.pid);
      const r = await load({ url: `${sb.base}${path}`, method: 'POST', headers: json, body, duration });
      const after = cpuMs(sb.child.pid);
      const n = r.rps * duration;
      return before !== undefined && after !== undefined && n > 0 ? { ...r, cpu_us: ((after - before) * 1000) / n } : r;
    };
    // 7 rounds, as foundation and validate: on 2 shared cores one 3 s round's ratio ranges 0.8-1.0 for the same
    // code, and the median of 3 moved by 0.05 between runs.
    const rounds = Number(process.env.BENCH_ROUNDS ?? 7);

    const runs: Record<string, Measured[]> = {};
    const loads: Array<[string, () => Promise<Measured>]> = [
      ['untraced', () => post(plain, '/api/v1/agents/untraced/chat', message)],
      ['traced', () => post(plain, '/api/v1/agents/traced/chat', message)],
      ['llm', () => post(plain, '/api/v1/llm/completions', completion)],
      ['llm-dead', () => post(exporting, '/api/v1/llm/completions', completion)],
      ['traced-dead', () => post(exporting, '/api/v1/agents/traced/chat', message)],
    ];
    for (let i = 0; i < rounds; i++)
      for (const [k, run] of i % 2 ? [...loads].reverse() : loads) (runs[k] ??= []).push(await run());
    const best = (k: string) => runs[k]!.reduce((a, b) => (b.rps > a.rps ? b : a));
    const ratio = (k: string, base: string) => median(runs[k]!.map((r, i) => r.rps / runs[base]![i]!.rps));
    const errs = (k: string) => runs[k]!.reduce((n, r) => n + r.errors + r.non2xx, 0);
    // Server CPU per request: the median over rounds, and the median of per-round ratios (base / this).
    const cpu = (k: string, base?: string) => {
      const us = runs[k]!.map((r) => r.cpu_us);
      if (us.some((u) => u === undefined)) return '';
      const own = `server CPU ${median(us as number[]).toFixed(0)} us/request`;
      if (!base) return `; ${own}`;
      const x = median(runs[k]!.map((r, i) => runs[base]![i]!.cpu_us! / r.cpu_us!));
      return `; ${own}, ${x.toFixed(2)}x the baseline's by CPU`;
    };
    const row = (group: string, name: string, k: string, base?: string, goal?: string): BenchRow => {
      const r = best(k);
      const x = base ? ratio(k, base) : 1;
      return {
        group,
        name,
        rps: r.rps,
        p50_ms: r.p50_ms,
        p99_ms: r.p99_ms,
        ratio: x,
        ...(goal ? { goal: `${goal}: ${x >= 0.9 ? 'met' : 'NOT met'}` } : {}),
        note: `median of ${rounds} paired rounds; errors ${errs(k)}${cpu(k, base)}`,
      };
    };
    const metrics = await (await fetch(`${exporting.base}/metrics`)).text();
    const dropped = /switchboard_otlp_spans_total\{provider="store",outcome="dropped"\} (\d+)/.exec(metrics)?.[1];
    const failed = /switchboard_otlp_spans_total\{provider="store",outcome="failed"\} (\d+)/.exec(metrics)?.[1];
    const g1 = 'observability: agent chat, auto_trace on store';
    const g2 = 'observability: dead OTLP collector, llm completions';
    const g3 = 'observability: dead OTLP collector, agent chat';
    const dead1 = row(g3, 'POST /agents/{name}/chat auto_trace, dead collector', 'traced-dead', 'traced', '>= 0.9x');
    dead1.note += `; spans dropped ${dropped ?? '?'}, failed ${failed ?? '?'} (bounded queue)`;
    const traced = row(g1, 'POST /agents/{name}/chat auto_trace on (store, SQLite)', 'traced', 'untraced', '>= 0.9x');
    traced.note += `; load average at the end ${loadAverage()}`;
    return [
      row(g1, 'POST /agents/{name}/chat auto_trace off (baseline)', 'untraced'),
      traced,
      row(g2, 'POST /llm/completions, no export (baseline)', 'llm'),
      row(g2, 'POST /llm/completions, dead collector', 'llm-dead', 'llm', '>= 0.9x'),
      row(g3, 'POST /agents/{name}/chat auto_trace, no export (baseline)', 'traced'),
      dead1,
    ];
  } finally {
    await plain.stop();
    await exporting.stop();
    dead.close();
  }
};

export default bench;
