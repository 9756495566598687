import { join } from 'node:path';
import { discoverPackages } from '../core/discovery.ts';
import { load, percentiles, type BenchModule, type BenchRow, type LoadResult } from './harness.ts';
import { ROOT, startSwitchboard } from './processes.ts';
import { timeToFirstMatch } from './stream-timing.ts';

const STEP_LLM = join(ROOT, 'test/agents/fixtures/step-llm');

/** The LLM answers at once with a short text: the scripted provider when installed, else the test step LLM. */
async function llmConfig(): Promise<{ config: Record<string, unknown>; label: string }> {
  const types = new Set(
    (await discoverPackages()).flatMap((p) => p.factories.filter((f) => f.kind === 'llm').map((f) => f.type)),
  );
  if (types.has('scripted')) {
    return {
      label: 'scripted',
      config: {
        providers: {
          llm: {
            default: 'scripted',
            instances: { scripted: { type: 'scripted', options: { responses: [{ content: 'pong' }] } } },
          },
        },
      },
    };
  }
  return {
    label: 'test_steps',
    config: {
      provider_packages: [STEP_LLM],
      providers: {
        llm: {
          default: 'steps',
          instances: { steps: { type: 'test_steps', options: { steps: [{ content: 'pong' }] } } },
        },
      },
    },
  };
}

/** Time to the first SSE event of type `type`. */
const timeToFirst = (url: string, body: unknown, type: string) =>
  timeToFirstMatch(url, body, new RegExp(`"type":"${type}"`));

const bench: BenchModule = async () => {
  const { config, label } = await llmConfig();
  const sb = await startSwitchboard(
    { ...config, store: { backend: 'sqlite' } },
    {},
    { args: ['--surfaces', 'platform'] },
  );
  const base = sb.base;
  const json = { 'content-type': 'application/json' };
  try {
    const mk = (spec: Record<string, unknown>) =>
      fetch(`${base}/api/v1/agents`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ model: 'bench', ...spec }),
      });
    await mk({ name: 'bench' });
    await mk({ name: 'bare', hooks: { auto_memory: false, auto_trace: false } });
    const completion = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'ping' }] });
    const message = JSON.stringify({ message: 'ping' });

    const direct = await load({
      url: `${base}/api/v1/llm/completions`,
      method: 'POST',
      headers: json,
      body: completion,
    });
    const agent = await load({ url: `${base}/api/v1/agents/bench/chat`, method: 'POST', headers: json, body: message });
    const bare = await load({ url: `${base}/api/v1/agents/bare/chat`, method: 'POST', headers: json, body: message });
    const group = 'agents: chat round trip';
    const n = Number(process.env.BENCH_SAMPLES ?? 200);
    // The two agent variants are judged the same way against the direct completion.
    const loopRow = (name: string, r: LoadResult): BenchRow => ({
      group,
      name,
      rps: r.rps,
      p50_ms: r.p50_ms,
      p99_ms: r.p99_ms,
      ratio: r.rps / direct.rps,
      // Under 10 connections a request's latency includes waiting behind the other nine, so the
      // added p50 here is throughput in disguise; the per-turn goal is judged one request at a time below.
      note: `+${(r.p50_ms - direct.p50_ms).toFixed(2)} ms p50 under 10 connections (includes queueing); errors ${r.errors + r.non2xx}`,
    });
    const rows: BenchRow[] = [
      {
        group,
        name: `POST /llm/completions (${label}, baseline)`,
        rps: direct.rps,
        p50_ms: direct.p50_ms,
        p99_ms: direct.p99_ms,
        ratio: 1,
      },
      loopRow('POST /agents/{name}/chat (auto_memory + auto_trace)', agent),
      loopRow('POST /agents/{name}/chat (hooks off)', bare),
    ];

    // One request at a time, interleaved so drift hits all three alike, after a warm-up.
    const once = async (url: string, body: string) => {
      const t0 = performance.now();
      await (await fetch(url, { method: 'POST', headers: json, body })).arrayBuffer();
      return performance.now() - t0;
    };
    const targets = [
      [`${base}/api/v1/llm/completions`, completion],
      [`${base}/api/v1/agents/bench/chat`, message],
      [`${base}/api/v1/agents/bare/chat`, message],
    ] as const;
    for (let i = 0; i < 20; i++) for (const [u, b] of targets) await once(u, b);
    const samples: number[][] = [[], [], []];
    for (let i = 0; i < n; i++) for (const [k, [u, b]] of targets.entries()) samples[k]!.push(await once(u, b));
    const [sd, sa, sb] = samples.map((x) => percentiles(x)) as [
      ReturnType<typeof percentiles>,
      ReturnType<typeof percentiles>,
      ReturnType<typeof percentiles>,
    ];
    const sequential = 'agents: one turn, sequential';
    const verdict = (added: number) => `+${added.toFixed(2)} ms p50 per turn: ${added < 2 ? 'met' : 'NOT met'}`;
    rows.push(
      { group: sequential, name: 'POST /llm/completions (baseline)', p50_ms: sd.p50, p99_ms: sd.p99, ratio: 1 },
      {
        group: sequential,
        name: 'POST /agents/{name}/chat (auto_memory + auto_trace)',
        p50_ms: sa.p50,
        p99_ms: sa.p99,
        ratio: sa.p50 / sd.p50,
        goal: 'loop adds < 2 ms per turn at p50',
        note: verdict(sa.p50 - sd.p50),
      },
      {
        group: sequential,
        name: 'POST /agents/{name}/chat (hooks off)',
        p50_ms: sb.p50,
        p99_ms: sb.p99,
        ratio: sb.p50 / sd.p50,
        goal: 'loop adds < 2 ms per turn at p50',
        note: verdict(sb.p50 - sd.p50),
      },
    );

    // Time to first token, sequential, one request at a time.
    const llmFirst: number[] = [];
    const agentFirst: number[] = [];
    for (let i = 0; i < n; i++) {
      llmFirst.push(
        await timeToFirst(`${base}/api/v1/llm/completions/stream`, JSON.parse(completion), 'content_delta'),
      );
      agentFirst.push(await timeToFirst(`${base}/api/v1/agents/bench/chat/stream`, { message: 'ping' }, 'token'));
    }
    const l = percentiles(llmFirst.filter(Number.isFinite));
    const a = percentiles(agentFirst.filter(Number.isFinite));
    const ttft = 'agents: time to first streamed token';
    rows.push(
      { group: ttft, name: 'POST /llm/completions/stream (baseline)', p50_ms: l.p50, p99_ms: l.p99, ratio: 1 },
      {
        group: ttft,
        name: 'POST /agents/{name}/chat/stream',
        p50_ms: a.p50,
        p99_ms: a.p99,
        ratio: a.p50 / l.p50,
        note: `+${(a.p50 - l.p50).toFixed(2)} ms p50`,
      },
    );
    return rows;
  } finally {
    await sb.stop();
  }
};

export default bench;
