import t from 'tap';
import { openStore } from '../../core/store.ts';
import { startPlatformChild } from '../fixtures/platform-child.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { parseSse, readSse } from '../agents/helpers.ts';
import { FAST_RUNS, teamScript, type PlanTask } from './teams-fixture.ts';

t.test(
  'a server killed (SIGKILL) mid-run: after restart the run reads idle, its events replay, a retry of the failed task streams and completes',
  async (t) => {
    const dataDir = tempDir('sb-teams-restart-');
    const plan: PlanTask[] = [
      { id: 'A', title: 'slow part', assigned_to: 'w', depends_on: [] },
      { id: 'B', title: 'after A', assigned_to: 'w', depends_on: ['A'] },
    ];
    const script = teamScript(plan, [
      {
        match: '^You are working on one task of a team run\\.\\nTask A:',
        content: 'partial output of A that streams slowly, chunk by chunk',
      },
    ]);
    const llm = (chunk_delay_ms: number) => ({
      default: 'scripted',
      instances: { scripted: { type: 'scripted', options: { responses: script, chunk_delay_ms } } },
    });
    const config = { providers: { llm: llm(250) }, platform: { teams: FAST_RUNS } };
    const { child, base, up } = await startPlatformChild(t, dataDir, config);
    t.ok(up, 'the server came up');
    if (!up) return;
    const json = { 'content-type': 'application/json' };
    const post = (url: string, body: unknown) =>
      fetch(`${base}${url}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    for (const name of ['p', 'w', 's'])
      t.equal((await post('/api/v1/agents', { name, model: 'm', hooks: { auto_memory: false } })).status, 201);
    t.equal(
      (await post('/api/v1/teams', { name: 'crew', planner: 'p', synthesizer: 's', workers: ['w'] })).status,
      201,
    );

    const abort = new AbortController();
    const res = await fetch(`${base}/api/v1/teams/crew/run/stream`, {
      method: 'POST',
      headers: json,
      body: '{"message":"build it"}',
      signal: abort.signal,
    });
    const seen = await readSse(res, (ev) => ev.type === 'worker_token', abort);
    const runId = seen[0]!.team_run_id as string;
    // Kill only once a token is in SQLite (the log is written behind the live stream).
    const stored = new AbortController();
    const replayed = await readSse(
      await fetch(`${base}/api/v1/teams/crew/runs/${runId}/stream`, { signal: stored.signal }),
      (ev) => ev.type === 'worker_token',
      stored,
    );
    t.equal(replayed.at(-1)?.type, 'worker_token', 'a worker token is stored before the kill');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const store = await openStore({ backend: 'sqlite', dataDir });
    t.teardown(() => store.close());
    const app = await makeApp(t, { ...config, providers: { llm: llm(0) } }, { store, env: { DATA_DIR: dataDir } });
    const rec = (await store.collection<{ status: string; heartbeat_at: number }>('team_runs').get(`crew/${runId}`))!;
    t.equal(rec.status, 'running', 'the killed process left its run marked running');
    const staleIn = rec.heartbeat_at + FAST_RUNS.stale_after_ms - Date.now();
    if (staleIn > 0) await new Promise((r) => setTimeout(r, staleIn + 50));

    t.equal(
      (await app.inject({ url: `/api/v1/teams/crew/runs/${runId}/status` })).json().status,
      'idle',
      'a run whose process is gone reads idle',
    );
    const board = (await app.inject({ url: `/api/v1/teams/crew/runs/${runId}` })).json();
    t.equal(board.status, 'interrupted');
    t.match(board.tasks, [
      { id: 'A', status: 'failed', error: /process that ran this task stopped/ },
      { id: 'B', status: 'pending' },
    ]);
    const events = (await app.inject({ url: `/api/v1/teams/crew/runs/${runId}/events` })).json().events;
    t.same(
      events.slice(0, 5).map((e: { type: string }) => e.type),
      ['team_start', 'phase_change', 'tasks_created', 'phase_change', 'task_claimed'],
      'the events written before the kill are readable',
    );
    const partial = events
      .filter((e: { type: string }) => e.type === 'worker_token')
      .map((e: { content: string }) => e.content)
      .join('');
    t.ok(
      partial.length > 0 && 'partial output of A that streams slowly, chunk by chunk'.startsWith(partial),
      'the partial output of A is in the log',
    );
    t.equal(
      (await app.inject({ method: 'DELETE', url: `/api/v1/teams/crew/runs/${runId}/cancel` })).statusCode,
      404,
      'nothing to cancel',
    );

    // Two retries at once (as from two replicas): the claim of attempt 2 lets one through.
    const [r1, r2] = await Promise.all(
      [0, 1].map(() => app.inject({ method: 'POST', url: `/api/v1/teams/crew/runs/${runId}/tasks/A/retry` })),
    );
    const codes = [r1!.statusCode, r2!.statusCode].sort();
    t.same(codes, [200, 409], 'one retry runs, the other is refused');
    const streamed = parseSse((r1!.statusCode === 200 ? r1 : r2)!.body);
    t.same(
      streamed[0],
      { type: 'task_retry', agent: 'w', task_id: 'A', attempt: 2, seq: events.length },
      'the retry continues the run’s event log',
    );
    const order = streamed
      .map((e) => `${e.type}${e.task_id ? `:${e.task_id}` : ''}`)
      .filter((s) => !s.startsWith('worker_token'));
    t.same(order, [
      'task_retry:A',
      'phase_change',
      'task_claimed:A',
      'task_completed:A',
      'task_claimed:B',
      'task_completed:B',
      'phase_change',
      'phase_change',
      'retry_done:A',
      'done',
    ]);
    t.match(streamed.at(-1), { type: 'done', phase: 'done', tasks_created: 2, tasks_completed: 2 });
    t.match(
      streamed.at(-1)!.response,
      /A slow part \[done\]: partial output of A[\s\S]*B after A \[done\]: RESULT B/,
      'the synthesis is redone',
    );
    const again = (await app.inject({ url: `/api/v1/agents/w/sessions/${runId}-A-2` })).json();
    t.match(again.messages[0].content, `Its output so far:\n${partial}`, 'the retry resumed from the partial output');
    const after = (await app.inject({ url: `/api/v1/teams/crew/runs/${runId}` })).json();
    t.match(after, { status: 'done', tasks_completed: 2 });
    const all = (await app.inject({ url: `/api/v1/teams/crew/runs/${runId}/events` })).json().events;
    t.same(
      all.map((e: { seq: number }) => e.seq),
      all.map((_: unknown, i: number) => i),
      'one log, in order, before and after the restart',
    );
  },
);
