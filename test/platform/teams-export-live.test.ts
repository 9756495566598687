import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { writeProviderPackage } from '../fixtures/provider-package.ts';
import { makeApp, tempDir } from '../helpers/app.ts';

/**
 * A scripted LLM provider package: the agent's system prompt names its role;
 * the planner answers the same plan to every prompt (a task for a worker the
 * team does not have included), workers echo their task title, the
 * synthesizer echoes the results it was given.
 */
function scriptedLlm(): string {
  return writeProviderPackage({
    name: 'fixture-team-llm',
    provides: ['llm'],
    source: `const PLAN = [
  { id: 'a', title: 'Gather facts', description: 'list facts', assigned_to: 'alpha', depends_on: [] },
  { id: 'b', title: 'Draft summary', description: 'use the facts', assigned_to: 'beta', depends_on: ['a'] },
  { id: 'c', title: 'Check sources', description: 'verify', assigned_to: 'gamma', depends_on: [] },
];
const text = (c) => typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => p.text ?? '').join('') : '';
function answer(req) {
  const role = /ROLE:(\\w+)/.exec(req.system ?? '')?.[1] ?? 'unknown';
  const last = text(req.messages[req.messages.length - 1]?.content);
  if (role === 'planner') return 'Plan: ' + JSON.stringify(PLAN);
  if (role === 'writer') return 'FINAL ' + (last.match(/\\[done\\]: [^\\n]*/g) ?? []).join(' | ');
  return role + ' did ' + (/Task \\S+: (.*)/.exec(last)?.[1] ?? '?');
}
export const providers = [{
  type: 'role_echo', kind: 'llm',
  create: (name) => ({
    name, type: 'role_echo', kind: 'llm', capabilities: { tools: true, streaming: true, embeddings: false },
    async complete(req) {
      return { content: answer(req), model: 'scripted', stop_reason: 'end_turn', tool_calls: [], usage: { prompt_tokens: 1, completion_tokens: 1 } };
    },
    async *stream(req) {
      yield { type: 'content_delta', delta: answer(req) };
      yield { type: 'message_stop', stop_reason: 'end_turn', model: 'scripted' };
    },
    async models() { return ['scripted']; },
    healthcheck: async () => 'ok', close: async () => {},
  }),
}];\n`,
  });
}

t.test('the exported team script runs real agents on a listening gateway', async (t) => {
  const app = await makeApp(t, {
    provider_packages: [scriptedLlm()],
    providers: { llm: { default: 'scripted', instances: { scripted: { type: 'role_echo' } } } },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  for (const role of ['planner', 'alpha', 'beta', 'writer']) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      payload: { name: role, model: 'scripted', system_prompt: `ROLE:${role}`, hooks: { auto_memory: false } },
    });
    t.equal(res.statusCode, 201, `agent ${role} created`);
  }
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/teams',
        payload: { name: 'live', planner: 'planner', synthesizer: 'writer', workers: ['alpha', 'beta'] },
      })
    ).statusCode,
    201,
  );
  const script = await fetch(`${base}/api/v1/teams/live/export`);
  t.equal(script.status, 200);
  const file = join(tempDir('sb-team-live-'), 'live.py');
  writeFileSync(file, await script.text());

  const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      'python3',
      [file, '--json', 'write a summary'],
      { env: { ...process.env, SWITCHBOARD_QUIET: '1' }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
  t.equal(out.code, 0, out.stderr);
  const run = JSON.parse(out.stdout);
  // c goes to a worker the team does not have: it fails, one replanning round adds the plan again (a_2, b_2, c_2), c_2 fails too.
  t.match(run, { team_name: 'live', tasks_created: 6, tasks_completed: 4, workers_used: ['alpha', 'beta'] });
  const finalText =
    'FINAL [done]: alpha did Gather facts | [done]: beta did Draft summary | [done]: alpha did Gather facts | [done]: beta did Draft summary';
  t.equal(run.response, finalText, 'the synthesizer saw every result, in order');

  const sessions = (await app.inject({ method: 'GET', url: '/api/v1/agents/beta/sessions' })).json();
  t.equal(sessions.sessions.length, 2, 'beta ran each of its tasks in a session of its own');
  t.match(sessions.sessions.map((s: { session_id: string }) => s.session_id).sort(), [
    `${run.team_run_id}-b`,
    `${run.team_run_id}-b_2`,
  ]);

  // The same scenario run by the server: same board, same answer, same sessions.
  const served = await app.inject({
    method: 'POST',
    url: '/api/v1/teams/live/run',
    payload: { message: 'write a summary' },
  });
  t.equal(served.statusCode, 200);
  const s = served.json();
  t.same(
    {
      response: s.response,
      tasks_created: s.tasks_created,
      tasks_completed: s.tasks_completed,
      workers_used: s.workers_used,
      phase: s.phase,
    },
    {
      response: run.response,
      tasks_created: run.tasks_created,
      tasks_completed: run.tasks_completed,
      workers_used: run.workers_used,
      phase: run.phase,
    },
    'the server and the script agree on the outcome',
  );
  const board = (await app.inject({ url: `/api/v1/teams/live/runs/${s.team_run_id}` })).json();
  type Row = {
    id: string;
    status: string;
    assigned_to: string | null;
    depends_on: string[];
    result: string | null;
    error?: string | null;
  };
  const rows = (tasks: Row[]) =>
    tasks.map((x) => ({
      id: x.id,
      status: x.status,
      assigned_to: x.assigned_to,
      depends_on: x.depends_on,
      outcome: x.result ?? x.error,
    }));
  t.same(rows(board.tasks), rows(run.tasks), 'and on every task: status, worker, dependencies, result or reason');
  const served_sessions = (await app.inject({ method: 'GET', url: '/api/v1/agents/beta/sessions' }))
    .json()
    .sessions.map((x: { session_id: string }) => x.session_id);
  t.ok(
    served_sessions.includes(`${s.team_run_id}-b`) && served_sessions.includes(`${s.team_run_id}-b_2`),
    'the server used the same per-task sessions',
  );
});
