import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { listen, parseSse, readSse, until, type Ev } from '../agents/helpers.ts';
import { createTeam, openBackend, teamApp, teamScript, unique, type Backend, type PlanTask } from './teams-fixture.ts';

/**
 * Team run scenarios (issue 17) on the scripted LLM, each on the embedded
 * SQLite store and on Redis (names unique per run: the Redis is shared).
 */
const board = async (app: FastifyInstance, team: string, id: string) =>
  (await app.inject({ url: `/api/v1/teams/${team}/runs/${id}` })).json();
const streamRun = async (app: FastifyInstance, team: string, message = 'do it') => {
  const res = await app.inject({ method: 'POST', url: `/api/v1/teams/${team}/run/stream`, payload: { message } });
  if (res.statusCode !== 200) throw new Error(`run/stream: ${res.statusCode} ${res.body}`);
  return parseSse(res.body);
};
const types = (evs: Ev[]) => evs.map((e) => e.type);

for (const backend of ['sqlite', 'redis'] as Backend[]) {
  t.test(`${backend}: a diamond graph runs B and C in parallel and ends done with a synthesized answer`, async (t) => {
    const store = await openBackend(t, backend);
    const n = `dia-${unique()}`;
    const [w1, w2] = [`${n}-w1`, `${n}-w2`];
    const plan: PlanTask[] = [
      { id: 'A', title: 'base', assigned_to: w1, depends_on: [] },
      { id: 'B', title: 'left', assigned_to: w1, depends_on: ['A'] },
      { id: 'C', title: 'right', assigned_to: w2, depends_on: ['A'] },
      { id: 'D', title: 'join', assigned_to: w2, depends_on: ['B', 'C'] },
    ];
    const app = await teamApp(t, { store, script: teamScript(plan), delay_ms: 60 });
    await createTeam(app, n, [w1, w2]);
    const evs = await streamRun(app, n);
    t.same(types(evs).slice(0, 4), ['team_start', 'phase_change', 'tasks_created', 'phase_change']);
    t.same(
      evs.map((e) => e.seq),
      evs.map((_, i) => i),
      'events are numbered in order',
    );
    const at = (type: string, id: string) => evs.findIndex((e) => e.type === type && e.task_id === id);
    t.ok(
      at('task_claimed', 'B') < at('task_completed', 'C') && at('task_claimed', 'C') < at('task_completed', 'B'),
      'B and C are both claimed before either completes',
    );
    t.ok(at('task_completed', 'A') < Math.min(at('task_claimed', 'B'), at('task_claimed', 'C')), 'B and C wait for A');
    t.ok(
      at('task_claimed', 'D') > Math.max(at('task_completed', 'B'), at('task_completed', 'C')),
      'D waits for B and C',
    );
    const done = evs.at(-1)!;
    t.match(done, { type: 'done', phase: 'done', tasks_created: 4, tasks_completed: 4, workers_used: [w1, w2] });
    t.match(
      done.response,
      /^FINAL Compose the final answer[\s\S]*A base \[done\]: RESULT A\nB left \[done\]: RESULT B\nC right \[done\]: RESULT C\nD join \[done\]: RESULT D$/,
    );
    const b = await board(app, n, done.team_run_id as string);
    t.match(b, { status: 'done', phase: 'done', tasks_created: 4, tasks_completed: 4, turns_used: 6, limit: null });
    t.ok(b.tasks.every((x: { status: string }) => x.status === 'done'));
    // Per-task sessions: D's worker saw only its own task, with its dependencies' results passed in.
    const hist = (await app.inject({ url: `/api/v1/agents/${w2}/sessions/${done.team_run_id}-D` })).json();
    t.equal(hist.messages.length, 2, 'task D ran in a session of its own');
    t.match(
      hist.messages[0].content,
      /Task D: join[\s\S]*Result of B \(left\):\nRESULT B[\s\S]*Result of C \(right\):\nRESULT C/,
    );
    const runs = (await app.inject({ url: `/api/v1/teams/${n}/runs` })).json();
    t.match(runs, { team_name: n, runs: [{ team_run_id: done.team_run_id, status: 'done' }] });
    t.same((await app.inject({ url: `/api/v1/teams/${n}/runs/${done.team_run_id}/status` })).json().status, 'idle');
    const sync = await app.inject({ method: 'POST', url: `/api/v1/teams/${n}/run`, payload: { message: 'again' } });
    t.equal(sync.statusCode, 200);
    t.match(sync.json(), { team_name: n, phase: 'done', tasks_created: 4, tasks_completed: 4, workers_used: [w1, w2] });
    t.not(sync.json().team_run_id, done.team_run_id, 'each run gets its own team_run_id');
    t.equal(
      (await app.inject({ method: 'DELETE', url: `/api/v1/teams/${n}/runs/${done.team_run_id}` })).statusCode,
      200,
    );
    t.equal(
      (await app.inject({ url: `/api/v1/teams/${n}/runs/${done.team_run_id}/events` })).statusCode,
      404,
      'deleted with its events',
    );
  });

  t.test(
    `${backend}: an unknown worker and a cycle fail those tasks with reasons; one replanning round sees the failures`,
    async (t) => {
      const store = await openBackend(t, backend);
      const n = `bad-${unique()}`;
      const w = `${n}-w`;
      const plan: PlanTask[] = [
        { id: 'ok', title: 'fine', assigned_to: w, depends_on: [] },
        { id: 'lost', title: 'nobody', assigned_to: 'ghost', depends_on: [] },
        { id: 'P', title: 'egg', assigned_to: w, depends_on: ['Q'] },
        { id: 'Q', title: 'chicken', assigned_to: w, depends_on: ['P'] },
        { id: 'after', title: 'needs lost', assigned_to: w, depends_on: ['lost'] },
        { id: 'dangling', title: 'needs nothing real', assigned_to: w, depends_on: ['nope'] },
      ];
      const repair = [{ id: 'fix', title: 'repair', assigned_to: w, depends_on: ['ok'] }];
      const script = teamScript(plan, [
        { match: '^Some tasks of the team failed', content: JSON.stringify(repair) },
        { match: '^You are working on one task of a team run\\.\\nTask fix:', content: 'RESULT fix' },
      ]);
      const app = await teamApp(t, { store, script });
      await createTeam(app, n, [w]);
      const evs = await streamRun(app, n);
      const done = evs.at(-1)!;
      t.equal(done.type, 'done');
      t.equal(done.phase, 'done', 'the run still ends, with what could be done');
      const failed = Object.fromEntries(evs.filter((e) => e.type === 'task_failed').map((e) => [e.task_id, e.error]));
      t.match(failed.lost, /assigned to unknown worker 'ghost'/);
      t.match(failed.P, /dependency cycle: /);
      t.match(failed.Q, /dependency cycle: /);
      t.match(failed.after, /dependency 'lost' failed/);
      t.match(failed.dangling, /depends on unknown task 'nope'/);
      t.ok(
        types(evs).includes('phase_change') && evs.some((e) => e.type === 'phase_change' && e.phase === 'replanning'),
        'a replanning round ran',
      );
      const b = await board(app, n, done.team_run_id as string);
      t.same(
        b.tasks.map((x: { id: string; status: string }) => [x.id, x.status]),
        [
          ['ok', 'done'],
          ['lost', 'failed'],
          ['P', 'failed'],
          ['Q', 'failed'],
          ['after', 'failed'],
          ['dangling', 'failed'],
          ['fix', 'done'],
        ],
      );
      const planner = (
        await app.inject({ url: `/api/v1/agents/${n}-planner/sessions/${done.team_run_id}-planner` })
      ).json();
      t.match(
        planner.messages[2].content,
        /lost nobody \[failed\]: assigned to unknown worker 'ghost'/,
        'the planner saw the failures when replanning',
      );
      t.equal(
        evs.filter((e) => e.type === 'phase_change' && e.phase === 'replanning').length,
        1,
        'replanning is bounded (max_replans 1)',
      );
    },
  );

  t.test(`${backend}: global_max_turns and global_timeout_seconds stop runs that would loop`, async (t) => {
    const store = await openBackend(t, backend);
    const n = `lim-${unique()}`;
    const w = `${n}-w`;
    const plan: PlanTask[] = [
      { id: 'L1', title: 'loop', assigned_to: w, depends_on: [] },
      { id: 'L2', title: 'loop too', assigned_to: w, depends_on: [] },
      { id: 'N', title: 'next', assigned_to: w, depends_on: ['L1'] },
    ];
    // Workers call a tool on every turn, so only a limit ends them (agent max_turns is 200).
    const loop = [
      {
        match: '^You are working on one task',
        turns: [{ content: 'thinking', tool_calls: [{ name: 'think', input: {} }] }],
      },
    ];
    const app = await teamApp(t, { store, script: teamScript(plan, loop), delay_ms: 20 });
    await createTeam(app, n, [w], { global_max_turns: 6, global_timeout_seconds: 600 }, { max_turns: 200 });
    const evs = await streamRun(app, n);
    const done = evs.at(-1)!;
    t.match(done, {
      type: 'done',
      phase: 'failed',
      limit: 'global_max_turns',
      detail: 'global_max_turns (6) reached',
      turns_used: 6,
    });
    const b = await board(app, n, done.team_run_id as string);
    t.notOk(
      b.tasks.some((x: { status: string }) => x.status === 'in_progress'),
      'no task is left in progress',
    );
    t.match(
      b.tasks.find((x: { id: string }) => x.id === 'L1'),
      { status: 'failed', error: 'global_max_turns (6) reached' },
    );
    t.match(b, { status: 'failed', limit: 'global_max_turns' });

    const slow = `slow-${unique()}`;
    await createTeam(app, slow, [w], { global_max_turns: 10000, global_timeout_seconds: 1 });
    const res = await app.inject({ method: 'POST', url: `/api/v1/teams/${slow}/run`, payload: { message: 'go' } });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { phase: 'timed_out', tasks_completed: 0, response: 'global_timeout_seconds (1) reached' });
    const tb = await board(app, slow, res.json().team_run_id);
    t.match(tb, { status: 'timed_out', limit: 'global_timeout_seconds' });
    t.notOk(tb.tasks.some((x: { status: string }) => x.status === 'in_progress'));
    const last = (await app.inject({ url: `/api/v1/teams/${slow}/runs/${res.json().team_run_id}/events` }))
      .json()
      .events.at(-1);
    t.match(last, { type: 'done', phase: 'timed_out', limit: 'global_timeout_seconds' });
  });

  t.test(`${backend}: cancel mid-run leaves no task in progress, a second cancel is 404`, async (t) => {
    const store = await openBackend(t, backend);
    const n = `can-${unique()}`;
    const w = `${n}-w`;
    const plan: PlanTask[] = [
      { id: 'A', title: 'long', assigned_to: w, depends_on: [] },
      { id: 'B', title: 'later', assigned_to: w, depends_on: ['A'] },
    ];
    const loop = [
      {
        match: '^You are working on one task',
        turns: [{ content: 'step', tool_calls: [{ name: 'think', input: {} }] }],
      },
    ];
    const app = await teamApp(t, { store, script: teamScript(plan, loop), delay_ms: 30 });
    await createTeam(app, n, [w], {}, { max_turns: 200 });
    const running = app.inject({ method: 'POST', url: `/api/v1/teams/${n}/run/stream`, payload: { message: 'go' } });
    const runId = await until(
      async () =>
        (await app.inject({ url: `/api/v1/teams/${n}/runs` })).json().runs[0]?.team_run_id as string | undefined,
      (id) => id !== undefined,
    );
    await until(
      () => board(app, n, runId!),
      (b) => b.tasks?.some((x: { status: string }) => x.status === 'in_progress'),
    );
    t.equal((await app.inject({ url: `/api/v1/teams/${n}/runs/${runId}/status` })).json().status, 'running');
    const cancel = await app.inject({ method: 'DELETE', url: `/api/v1/teams/${n}/runs/${runId}/cancel` });
    t.equal(cancel.statusCode, 200);
    t.same(cancel.json(), { team_run_id: runId, team_name: n, status: 'cancelled' });
    const b = await board(app, n, runId!);
    t.notOk(
      b.tasks.some((x: { status: string }) => x.status === 'in_progress'),
      'no task in progress after cancel',
    );
    t.match(
      b.tasks.find((x: { id: string }) => x.id === 'A'),
      { status: 'failed', error: 'The run was cancelled' },
    );
    t.equal(b.status, 'cancelled');
    const again = await app.inject({ method: 'DELETE', url: `/api/v1/teams/${n}/runs/${runId}/cancel` });
    t.equal(again.statusCode, 404);
    t.equal(again.json().code, 'SB_ERR_TEAMS_NO_ACTIVE_RUN');
    const evs = parseSse((await running).body);
    t.same(types(evs).slice(-3), ['cancelled', 'phase_change', 'done']);
    t.equal(evs.at(-1)!.phase, 'cancelled');
  });

  t.test(
    `${backend}: a client that leaves /run/stream and reconnects to /runs/{id}/stream gets every event once, in order`,
    async (t) => {
      const store = await openBackend(t, backend);
      const n = `rec-${unique()}`;
      const w = `${n}-w`;
      const plan: PlanTask[] = [
        { id: 'A', title: 'one', assigned_to: w, depends_on: [] },
        { id: 'B', title: 'two', assigned_to: w, depends_on: ['A'] },
        { id: 'C', title: 'three', assigned_to: w, depends_on: ['B'] },
      ];
      const app = await teamApp(t, { store, script: teamScript(plan), delay_ms: 150 });
      await createTeam(app, n, [w]);
      const base = await listen(t, app);
      const abort = new AbortController();
      const res = await fetch(`${base}/api/v1/teams/${n}/run/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"message":"go"}',
        signal: abort.signal,
      });
      const before = await readSse(res, (ev) => ev.type === 'task_claimed', abort);
      const runId = before[0]!.team_run_id as string;
      t.equal(before.at(-1)!.type, 'task_claimed', 'left mid-run');
      t.equal(
        (await app.inject({ url: `/api/v1/teams/${n}/runs/${runId}/status` })).json().status,
        'running',
        'the run goes on without its client',
      );
      const after = await readSse(await fetch(`${base}/api/v1/teams/${n}/runs/${runId}/stream`));
      t.equal(after.at(-1)!.type, 'done', 'the reconnected stream follows the run to its end');
      t.same(
        after.map((e) => e.seq),
        after.map((_, i) => i),
        'every event exactly once, in order',
      );
      t.same(after.slice(0, before.length), before, 'the replay starts with what the first stream saw');
      const stored = (await app.inject({ url: `/api/v1/teams/${n}/runs/${runId}/events` })).json();
      t.same(stored.events, after, 'the event log and the stream agree');
      t.equal(stored.status, 'done');
    },
  );

  t.test(`${backend}: shared-memory tools write to and read from the expanded namespace`, async (t) => {
    const store = await openBackend(t, backend);
    const n = `mem-${unique()}`;
    const w = `${n}-w`;
    const plan: PlanTask[] = [
      { id: 'W', title: 'write', assigned_to: w, depends_on: [] },
      { id: 'R', title: 'read', assigned_to: w, depends_on: ['W'] },
    ];
    const workers = [
      {
        match: '^You are working on one task of a team run\\.\\nTask W:',
        turns: [
          { tool_calls: [{ name: 'share_finding', input: { key: 'fact', content: 'the sky is green' } }] },
          { content: 'shared' },
        ],
      },
      {
        match: '^You are working on one task of a team run\\.\\nTask R:',
        turns: [
          { tool_calls: [{ name: 'read_shared', input: { key: 'fact' } }] },
          { content: 'read: {{tool_result}}' },
        ],
      },
    ];
    const app = await teamApp(t, { store, script: teamScript(plan, workers), memory: true });
    await createTeam(app, n, [w], { shared_memory_namespace: 'team:{team_name}' });
    const evs = await streamRun(app, n);
    t.match(evs.at(-1), { type: 'done', phase: 'done', tasks_completed: 2 });
    const r = evs.find((e) => e.type === 'task_completed' && e.task_id === 'R')!;
    t.match(r.result, /^read: .*the sky is green/, 'the second task read what the first shared');
    const rec = await app.inject({ url: `/api/v1/memory/${encodeURIComponent(`team:${n}`)}/fact` });
    t.equal(rec.statusCode, 200);
    t.equal(rec.json().content, 'the sky is green', `the finding is in team:${n}`);
    const runId = evs[0]!.team_run_id as string;
    const auto = await app.inject({
      url: `/api/v1/memory/${encodeURIComponent(`team:${n}`)}/${encodeURIComponent(`${runId}:W`)}`,
    });
    t.equal(auto.json().content, 'shared', "each task's result is shared too, as the exported script does");
    const hist = (await app.inject({ url: `/api/v1/agents/${w}/sessions/${runId}-R` })).json();
    t.match(
      hist.messages[0].content,
      /Shared findings of the team:\n- /,
      'later tasks see the shared findings in their prompt',
    );
  });
}

t.test(
  'bad input: blank message 422, unknown team 404, missing member 422 naming it, retry of a task that did not fail 409',
  async (t) => {
    const store = await openBackend(t, 'sqlite');
    const n = `inp-${unique()}`;
    const w = `${n}-w`;
    const app = await teamApp(t, {
      store,
      script: teamScript([{ id: 'A', title: 'one', assigned_to: w, depends_on: [] }]),
    });
    await createTeam(app, n, [w]);
    for (const message of ['', '   ']) {
      const res = await app.inject({ method: 'POST', url: `/api/v1/teams/${n}/run`, payload: { message } });
      t.equal(res.statusCode, 422, `message ${JSON.stringify(message)}`);
      t.equal(res.json().code, 'SB_ERR_VALIDATION');
    }
    t.same((await app.inject({ url: `/api/v1/teams/${n}/runs` })).json().runs, [], 'nothing was started');
    const ghost = await app.inject({ method: 'POST', url: '/api/v1/teams/ghost-team/run', payload: { message: 'x' } });
    t.equal(ghost.statusCode, 404);
    t.equal(ghost.json().code, 'SB_ERR_TEAM_NOT_FOUND');
    t.equal(
      (await app.inject({ method: 'PUT', url: `/api/v1/teams/${n}`, payload: { workers: [w, 'absent-worker'] } }))
        .statusCode,
      200,
    );
    const missing = await app.inject({
      method: 'POST',
      url: `/api/v1/teams/${n}/run/stream`,
      payload: { message: 'x' },
    });
    t.equal(missing.statusCode, 422);
    t.match(missing.json(), { code: 'SB_ERR_TEAM_AGENT_MISSING', detail: /'absent-worker' does not exist/ });
    t.same((await app.inject({ url: `/api/v1/teams/${n}/runs` })).json().runs, [], 'still nothing started');
    await app.inject({ method: 'PUT', url: `/api/v1/teams/${n}`, payload: { workers: [w] } });
    const run = (await app.inject({ method: 'POST', url: `/api/v1/teams/${n}/run`, payload: { message: 'x' } })).json();
    const retry = await app.inject({ method: 'POST', url: `/api/v1/teams/${n}/runs/${run.team_run_id}/tasks/A/retry` });
    t.equal(retry.statusCode, 409);
    t.match(retry.json(), { code: 'SB_ERR_TEAM_TASK_NOT_FAILED', detail: /'done'; only a failed task can be retried/ });
    t.equal(
      (await app.inject({ method: 'POST', url: `/api/v1/teams/${n}/runs/${run.team_run_id}/tasks/nope/retry` }))
        .statusCode,
      404,
    );
    t.equal(
      (await app.inject({ method: 'DELETE', url: `/api/v1/teams/${n}/runs/${run.team_run_id}/cancel` })).statusCode,
      404,
      'a finished run has nothing to cancel',
    );
  },
);

t.test('redis: a run started on one replica is seen running, cancelled and replayed from another', async (t) => {
  const [s1, s2] = [await openBackend(t, 'redis'), await openBackend(t, 'redis')];
  const n = `rep-${unique()}`;
  const w = `${n}-w`;
  const plan: PlanTask[] = [{ id: 'A', title: 'long', assigned_to: w, depends_on: [] }];
  const loop = [
    { match: '^You are working on one task', turns: [{ content: 'step', tool_calls: [{ name: 'think', input: {} }] }] },
  ];
  const a = await teamApp(t, { store: s1, script: teamScript(plan, loop), delay_ms: 30 });
  const b = await teamApp(t, { store: s2, script: teamScript(plan, loop), delay_ms: 30 });
  await createTeam(a, n, [w], {}, { max_turns: 200 });
  const running = a.inject({ method: 'POST', url: `/api/v1/teams/${n}/run/stream`, payload: { message: 'go' } });
  const runId = await until(
    async () => (await b.inject({ url: `/api/v1/teams/${n}/runs` })).json().runs[0]?.team_run_id as string | undefined,
    (id) => id !== undefined,
  );
  await until(
    () => board(b, n, runId!),
    (x) => x.tasks?.some((task: { status: string }) => task.status === 'in_progress'),
  );
  t.equal(
    (await b.inject({ url: `/api/v1/teams/${n}/runs/${runId}/status` })).json().status,
    'running',
    'the other replica sees it running (fresh heartbeat)',
  );
  t.equal(
    (await b.inject({ method: 'DELETE', url: `/api/v1/teams/${n}/runs/${runId}/cancel` })).statusCode,
    200,
    'and cancels it through the store',
  );
  const evs = parseSse((await running).body);
  t.match(evs.at(-1), { type: 'done', phase: 'cancelled' });
  const replay = parseSse((await b.inject({ url: `/api/v1/teams/${n}/runs/${runId}/stream` })).body);
  t.same(replay, evs, 'the other replica replays the same events');
  t.notOk((await board(b, n, runId!)).tasks.some((task: { status: string }) => task.status === 'in_progress'));
  t.equal((await b.inject({ method: 'DELETE', url: `/api/v1/teams/${n}/runs/${runId}/cancel` })).statusCode, 404);
});

t.test('runs are scoped to the user who started them (admins see all), as agent sessions are', async (t) => {
  const store = await openBackend(t, 'sqlite');
  const n = `own-${unique()}`;
  const app = await teamApp(t, {
    store,
    script: teamScript([{ id: 'A', title: 'one', assigned_to: `${n}-w`, depends_on: [] }]),
    headerAuth: true,
  });
  const as = (id: string, admin = false) => ({ 'x-test-user': id, 'x-test-admin': String(admin) });
  for (const a of [`${n}-p`, `${n}-s`, `${n}-w`]) {
    t.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/api/v1/agents',
          headers: as('alice'),
          payload: { name: a, model: 'm', shared_with: ['*'], hooks: { auto_memory: false } },
        })
      ).statusCode,
      201,
    );
  }
  const team = { name: n, planner: `${n}-p`, synthesizer: `${n}-s`, workers: [`${n}-w`], shared_with: ['*'] };
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/teams', headers: as('alice'), payload: team })).statusCode,
    201,
  );
  const run = await app.inject({
    method: 'POST',
    url: `/api/v1/teams/${n}/run`,
    headers: as('alice'),
    payload: { message: 'go' },
  });
  t.equal(run.statusCode, 200);
  const id = run.json().team_run_id as string;
  t.same(
    (await app.inject({ url: `/api/v1/teams/${n}/runs`, headers: as('bob') })).json().runs,
    [],
    "bob does not list alice's runs",
  );
  for (const [method, url] of [
    ['GET', `/api/v1/teams/${n}/runs/${id}`],
    ['GET', `/api/v1/teams/${n}/runs/${id}/events`],
    ['GET', `/api/v1/teams/${n}/runs/${id}/stream`],
    ['DELETE', `/api/v1/teams/${n}/runs/${id}/cancel`],
    ['DELETE', `/api/v1/teams/${n}/runs/${id}`],
    ['POST', `/api/v1/teams/${n}/runs/${id}/tasks/A/retry`],
  ] as const) {
    const res = await app.inject({ method, url, headers: as('bob') });
    t.equal(res.statusCode, 403, `${method} ${url}`);
    t.equal(res.json().code, 'SB_ERR_TEAM_RUN_FORBIDDEN');
  }
  t.equal(
    (await app.inject({ url: `/api/v1/teams/${n}/runs`, headers: as('root', true) })).json().runs.length,
    1,
    'an admin lists every run',
  );
  t.equal((await app.inject({ url: `/api/v1/teams/${n}/runs/${id}`, headers: as('root', true) })).statusCode, 200);
  const bobRun = await app.inject({
    method: 'POST',
    url: `/api/v1/teams/${n}/run`,
    headers: as('bob'),
    payload: { message: 'mine' },
  });
  t.equal(bobRun.statusCode, 200, 'a shared team runs for bob too');
  t.same(
    (await app.inject({ url: `/api/v1/teams/${n}/runs`, headers: as('bob') }))
      .json()
      .runs.map((r: { team_run_id: string }) => r.team_run_id),
    [bobRun.json().team_run_id],
  );
});
