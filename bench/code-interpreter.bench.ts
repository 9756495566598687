import { execFileSync } from 'node:child_process';
import { percentiles, type BenchModule, type BenchRow } from './harness.ts';
import { startSwitchboard } from './processes.ts';

const json = { 'content-type': 'application/json' };

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/**
 * The local (bubblewrap) code interpreter through HTTP: execute on a warm session, and a cold start (new session
 * + first execute, which starts the sandbox and the interpreter). Baseline: running `python3 -c 'print(1)'` as a
 * new process, which is what an interpreter without warm sessions pays on every call.
 */
const run: BenchModule = async () => {
  const sb = await startSwitchboard({
    providers: { code_interpreter: { instances: { local: { type: 'local', options: { max_sessions: 1000 } } } } },
  });
  const api = `${sb.base}/api/v1/code-interpreter/sessions`;
  const create = async () =>
    (await (await fetch(api, { method: 'POST', headers: json, body: '{"language":"python"}' })).json())
      .session_id as string;
  const execute = (id: string, code: string) =>
    fetch(`${api}/${id}/execute`, { method: 'POST', headers: json, body: JSON.stringify({ code }) }).then((r) =>
      r.json(),
    );
  try {
    const n = Number(process.env.BENCH_SAMPLES ?? 100);
    const direct: number[] = [];
    for (let i = 0; i < Math.min(n, 30); i++)
      direct.push(await timed(async () => execFileSync('/usr/bin/python3', ['-c', 'print(1)'])));

    const id = await create();
    await execute(id, 'print(0)');
    const warm: number[] = [];
    for (let i = 0; i < n; i++) warm.push(await timed(() => execute(id, 'print(1)')));

    const cold: number[] = [];
    for (let i = 0; i < Math.min(n, 20); i++) {
      cold.push(
        await timed(async () => {
          const s = await create();
          await execute(s, 'print(1)');
        }),
      );
    }

    const d = percentiles(direct);
    const w = percentiles(warm);
    const c = percentiles(cold);
    const rows: BenchRow[] = [
      {
        group: 'code interpreter',
        name: "python3 -c 'print(1)' as a new process (baseline)",
        p50_ms: d.p50,
        p99_ms: d.p99,
        ratio: 1,
      },
      {
        group: 'code interpreter',
        name: 'POST /execute print(1), warm session (bubblewrap)',
        p50_ms: w.p50,
        p99_ms: w.p99,
        ratio: w.p50 / d.p50,
        goal: 'p50 < 30 ms',
        note: `${w.p50 < 30 ? 'met' : 'NOT met'}; ${n} sequential calls`,
      },
      {
        group: 'code interpreter',
        name: 'new session + first execute (cold: sandbox and interpreter start)',
        p50_ms: c.p50,
        p99_ms: c.p99,
        ratio: c.p50 / d.p50,
        note: 'reported',
      },
    ];
    return rows;
  } finally {
    await sb.stop();
  }
};

export default run;
