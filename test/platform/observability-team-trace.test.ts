import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { createTeam, openBackend, teamApp, teamScript, unique, type PlanTask } from './teams-fixture.ts';

t.setTimeout(900_000);

async function teamTrace(app: FastifyInstance, runId: string) {
  for (let i = 0; i < 400; i++) {
    const r = (await app.inject({ url: `/api/v1/observability/traces?session_id=${runId}&tag=team` })).json();
    if (r.total > 0) return r.traces[0];
    await new Promise((res) => setTimeout(res, 25));
  }
  return undefined;
}

t.test('a team run writes one team trace with a span per task, beside its members’ agent traces', async (t) => {
  const store = await openBackend(t, 'sqlite');
  const n = `tr-${unique()}`;
  const plan: PlanTask[] = [
    { id: 'A', title: 'gather', assigned_to: `${n}-w1`, depends_on: [] },
    { id: 'B', title: 'write', assigned_to: `${n}-w1`, depends_on: ['A'] },
  ];
  const app = await teamApp(t, { store, script: teamScript(plan) });
  await createTeam(app, n, [`${n}-w1`]);
  const r = await app.inject({ method: 'POST', url: `/api/v1/teams/${n}/run`, payload: { message: 'do it' } });
  t.equal(r.statusCode, 200, r.body);
  const runId = r.json().team_run_id as string;
  const trace = await teamTrace(app, runId);
  t.match(trace, {
    name: `team:${n}`,
    session_id: runId,
    input: 'do it',
    output: /^FINAL /,
    tags: ['team', n],
    metadata: { team_run_id: runId, phase: 'done', tasks_created: 2, tasks_completed: 2 },
  });
  t.same(
    trace.spans.map((s: { name: string; metadata: { type: string; status: string } }) => [
      s.name,
      s.metadata.type,
      s.metadata.status,
    ]),
    [
      ['gather', 'task', 'done'],
      ['write', 'task', 'done'],
    ],
  );
  const members = (await app.inject({ url: `/api/v1/observability/traces?tag=agent&limit=50` })).json();
  t.ok(members.total >= 4, 'planner, two tasks and synthesizer traced as agent runs too');
});
