import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { load, median, type BenchModule, type BenchRow, type LoadResult } from './harness.ts';
import { startSwitchboard } from './processes.ts';

/**
 * Observability costs, side by side in one run:
 * - agent chat with auto_trace on the `store` provider vs the same chat with auto_trace off (goal >= 0.9x);
 * - with OTLP export to a dead collector (a port that accepts and never answers, the worst case: every
 *   export waits for its timeout) vs no export, for /llm/completions and for a traced agent chat.
 * Each comparison runs in alternating rounds and is judged on the median of per-round ratios.
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
    const post = (url: string, body: string) => load({ url, method: 'POST', headers: json, body, duration: 3 });
    const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

    const runs: Record<string, LoadResult[]> = {};
    const add = (k: string, r: LoadResult) => (runs[k] ??= []).push(r);
    for (let i = 0; i < rounds; i++) {
      add('untraced', await post(`${plain.base}/api/v1/agents/untraced/chat`, message));
      add('traced', await post(`${plain.base}/api/v1/agents/traced/chat`, message));
      add('llm', await post(`${plain.base}/api/v1/llm/completions`, completion));
      add('llm-dead', await post(`${exporting.base}/api/v1/llm/completions`, completion));
      add('traced-dead', await post(`${exporting.base}/api/v1/agents/traced/chat`, message));
    }
    const best = (k: string) => runs[k]!.reduce((a, b) => (b.rps > a.rps ? b : a));
    const ratio = (k: string, base: string) => median(runs[k]!.map((r, i) => r.rps / runs[base]![i]!.rps));
    const errs = (k: string) => runs[k]!.reduce((n, r) => n + r.errors + r.non2xx, 0);
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
        note: `median of ${rounds} paired rounds; errors ${errs(k)}`,
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
    return [
      row(g1, 'POST /agents/{name}/chat auto_trace off (baseline)', 'untraced'),
      row(g1, 'POST /agents/{name}/chat auto_trace on (store, SQLite)', 'traced', 'untraced', '>= 0.9x'),
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
