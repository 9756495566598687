import t from 'tap';
import { type Ev, parseSse, readSse } from '../agents/helpers.ts';
import { teamScript, type PlanTask } from '../platform/teams-fixture.ts';
import { startCluster } from './cluster.ts';

/**
 * A team's streaming run through nginx whose replica is killed (SIGKILL) while
 * a worker streams. Through the balancer (which then has only the other
 * replica): the run reads idle once its heartbeat is stale, the board shows the
 * interrupted task failed, the run's stream and events replay every event the
 * client had seen, in order, and a retry of the interrupted task on the
 * surviving replica finishes the run, continuing the same event log. Which
 * replica ran the stream is read from X-Request-Id, whose prefix is per process.
 */

t.setTimeout(900_000);

const json = { 'content-type': 'application/json' };
const prefixOf = (res: Response) => (res.headers.get('x-request-id') ?? '').split('-')[0];
const strip = (evs: Ev[]) => evs.map((e) => JSON.stringify(e));

const plan: PlanTask[] = [
  { id: 'A', title: 'slow part', assigned_to: 'w', depends_on: [] },
  { id: 'B', title: 'after A', assigned_to: 'w', depends_on: ['A'] },
];
const SLOW = 'partial output of A that streams slowly, chunk by chunk';

t.test('a replica killed mid-run: the team run reads idle through nginx and its events replay in full', async (t) => {
  const c = await startCluster(t, {
    config: {
      providers: {
        llm: {
          default: 'scripted',
          instances: {
            scripted: {
              type: 'scripted',
              options: {
                responses: teamScript(plan, [
                  { match: '^You are working on one task of a team run\\.\\nTask A:', content: SLOW },
                ]),
                chunk_delay_ms: 300,
              },
            },
          },
        },
      },
      platform: {
        teams: {
          heartbeat_ms: 100,
          stale_after_ms: 1500,
          poll_ms: 20,
          flush_ms: 5,
          resume_wait_ms: 200,
          token_interval_ms: 0,
        },
      },
    },
  });
  const prefixes = await Promise.all(c.replicas.map(async (r) => prefixOf(await fetch(`${r.base}/healthz`))));
  t.not(prefixes[0], prefixes[1], 'the replicas have distinct request id prefixes');

  const post = (url: string, body: unknown) =>
    fetch(`${c.base}${url}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
  // The cluster has a Redis of its own: plain names cannot collide with another test's.
  const team = 'crew';
  for (const name of ['p', 'w', 's'])
    t.equal((await post('/api/v1/agents', { name, model: 'm', hooks: { auto_memory: false } })).status, 201);
  t.equal(
    (await post('/api/v1/teams', { name: team, planner: 'p', synthesizer: 's', workers: ['w'] })).status,
    201,
    'team created through nginx',
  );

  const live = new AbortController();
  const res = await fetch(`${c.base}/api/v1/teams/${team}/run/stream`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ message: 'build it' }),
    signal: live.signal,
  });
  t.equal(res.status, 200, 'stream started through nginx');
  const runner = c.replicas[prefixes.indexOf(prefixOf(res))];
  if (!t.ok(runner, 'the replica running the stream is known')) return;
  const seen = await readSse(res, (_ev, all) => all.filter((e) => e.type === 'worker_token').length >= 3, live);
  t.equal(seen[0]?.type, 'team_start', 'the client saw the run start and three worker tokens');
  const runId = seen[0]!.team_run_id as string;

  // Kill only once the other replica can replay what the client saw (the log is written behind the stream).
  const other = c.replicas.find((r) => r !== runner)!;
  const stored = new AbortController();
  await readSse(
    await fetch(`${other.base}/api/v1/teams/${team}/runs/${runId}/stream`, { signal: stored.signal }),
    (_ev, all) => all.length >= seen.length,
    stored,
  );
  await runner.kill();

  let status = '';
  const failed: number[] = [];
  for (let i = 0; i < 600 && status !== 'idle'; i++) {
    // nginx may try the dead replica first: it retries on the other (proxy_next_upstream error).
    const r = await fetch(`${c.base}/api/v1/teams/${team}/runs/${runId}/status`);
    if (r.status !== 200) failed.push(r.status);
    else status = ((await r.json()) as { status: string }).status;
    if (status !== 'idle') await new Promise((r) => setTimeout(r, 100));
  }
  t.same(failed, [], 'every status request through nginx answered 200 after the kill');
  t.equal(status, 'idle', 'the run of the killed replica reads idle through nginx');

  const board = (await (await fetch(`${c.base}/api/v1/teams/${team}/runs/${runId}`)).json()) as {
    status: string;
    tasks: Array<{ id: string; status: string; error?: string }>;
  };
  t.equal(board.status, 'interrupted', 'the board says the run was interrupted');
  t.match(board.tasks, [
    { id: 'A', status: 'failed', error: /process that ran this task stopped/ },
    { id: 'B', status: 'pending' },
  ]);

  const replay = parseSse(await (await fetch(`${c.base}/api/v1/teams/${team}/runs/${runId}/stream`)).text());
  t.same(strip(replay.slice(0, seen.length)), strip(seen), `the ${seen.length} events seen before the kill replay`);
  const events = (
    (await (await fetch(`${c.base}/api/v1/teams/${team}/runs/${runId}/events`)).json()) as {
      events: Ev[];
    }
  ).events;
  t.same(strip(events), strip(replay), 'the events endpoint holds the same log as the replayed stream');
  t.comment(`replayed ${replay.length} events (${replay.map((e) => e.type).join(', ')})`);

  // The surviving replica resumes the interrupted task from its partial output and finishes the run.
  const retry = await fetch(`${c.base}/api/v1/teams/${team}/runs/${runId}/tasks/A/retry`, { method: 'POST' });
  t.equal(retry.status, 200, 'the retry streams through nginx');
  const resumed = parseSse(await retry.text());
  t.match(resumed[0], { type: 'task_retry', task_id: 'A', attempt: 2, seq: events.length });
  t.match(resumed.at(-1), { type: 'done', phase: 'done', tasks_completed: 2 });
  const all = (
    (await (await fetch(`${c.base}/api/v1/teams/${team}/runs/${runId}/events`)).json()) as {
      events: Array<{ seq: number }>;
    }
  ).events;
  t.same(
    all.map((e) => e.seq),
    all.map((_, i) => i),
    'one log, in order, before the kill and after the resume',
  );
});
