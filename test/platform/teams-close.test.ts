import t from 'tap';
import type { Socket } from 'node:net';
import { until } from '../agents/helpers.ts';
import { TeamRunStore } from '../../plugins/platform/teams/runtime/run-store.ts';
import { createTeam, openBackend, teamApp, teamScript, unique, type Backend } from './teams-fixture.ts';

/**
 * Shutting down while a team run is mid-turn: app.close() cancels the run, writes its state and returns, and then
 * the store closes without leaving a connection behind. A test file whose last subtest left a socket open ran all
 * its subtests and then hung until tap's timeout (teams-runs.test.ts under load).
 */

const redisSockets = () =>
  (process as unknown as { _getActiveHandles(): unknown[] })
    ._getActiveHandles()
    .filter((h): h is Socket => (h as { constructor?: { name?: string } })?.constructor?.name === 'Socket')
    .filter((s) => s.remotePort === 6379 && !s.destroyed);

for (const backend of ['sqlite', 'redis'] as Backend[]) {
  t.test(`${backend}: app.close() while a run is mid-turn stops the run and leaves nothing open`, async (t) => {
    const store = await openBackend(t, backend);
    const n = `cls-${unique()}`;
    const w = `${n}-w`;
    // The worker calls a tool on every turn, so the run only ends when it is stopped.
    const loop = [
      {
        match: '^You are working on one task',
        turns: [{ content: 'step', tool_calls: [{ name: 'think', input: {} }] }],
      },
    ];
    const app = await teamApp(t, {
      store,
      script: teamScript([{ id: 'A', title: 'long', assigned_to: w, depends_on: [] }], loop),
      delay_ms: 30,
    });
    await createTeam(app, n, [w], {}, { max_turns: 200 });
    const running = app.inject({ method: 'POST', url: `/api/v1/teams/${n}/run/stream`, payload: { message: 'go' } });
    const runs = new TeamRunStore(store, 60_000);
    const runId = await until(
      async () => (await runs.list(n))[0]?.team_run_id,
      (id) => id !== undefined,
    );
    await until(
      async () => (await runs.get(n, runId!))?.tasks ?? [],
      (tasks) => tasks.some((x) => x.status === 'in_progress'),
    );

    // Generous bound, far above TeamRuns.close()'s own 5 s: it proves "returns", not "is fast".
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      app.close().then(() => 'closed'),
      new Promise((r) => (timer = setTimeout(() => r('still closing after 60 s'), 60_000))),
    ]).finally(() => clearTimeout(timer));
    t.equal(closed, 'closed', 'app.close() returns while the run is mid-turn');
    const rec = await runs.get(n, runId!);
    t.not(rec?.status, 'running', 'the run was stopped and its state written before close() returned');
    t.notOk(
      rec?.tasks.some((x) => x.status === 'in_progress'),
      'no task is left in progress',
    );
    t.equal((await running).statusCode, 200, 'the stream that started it ended');

    await store.close();
    if (backend === 'redis') t.equal(redisSockets().length, 0, 'no Redis connection is left open');
  });
}
