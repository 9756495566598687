import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { writeProviderPackage } from '../fixtures/provider-package.ts';
import { makeApp, tempDir } from '../helpers/app.ts';

/**
 * A scripted LLM provider package: the agent's system prompt names its role;
 * the planner answers a two-task plan, workers echo their task title, the
 * synthesizer echoes the results it was given.
 */
function scriptedLlm(): string {
  return writeProviderPackage({
    name: 'fixture-team-llm',
    provides: ['llm'],
    source: `const PLAN = [
  { id: 'a', title: 'Gather facts', description: 'list facts', assigned_to: 'alpha', depends_on: [] },
  { id: 'b', title: 'Draft summary', description: 'use the facts', assigned_to: 'beta', depends_on: ['a'] },
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
  const app = await makeApp(t, { provider_packages: [scriptedLlm()], providers: { llm: { default: 'scripted', instances: { scripted: { type: 'role_echo' } } } } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  for (const role of ['planner', 'alpha', 'beta', 'writer']) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: role, model: 'scripted', system_prompt: `ROLE:${role}`, hooks: { auto_memory: false } } });
    t.equal(res.statusCode, 201, `agent ${role} created`);
  }
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/teams', payload: { name: 'live', planner: 'planner', synthesizer: 'writer', workers: ['alpha', 'beta'] } })).statusCode, 201);
  const script = await fetch(`${base}/api/v1/teams/live/export`);
  t.equal(script.status, 200);
  const file = join(tempDir('sb-team-live-'), 'live.py');
  writeFileSync(file, await script.text());

  const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile('python3', [file, '--json', 'write a summary'], { env: { ...process.env, SWITCHBOARD_QUIET: '1' }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
  t.equal(out.code, 0, out.stderr);
  const run = JSON.parse(out.stdout);
  t.match(run, { team_name: 'live', tasks_created: 2, tasks_completed: 2, workers_used: ['alpha', 'beta'] });
  t.equal(run.response, 'FINAL [done]: alpha did Gather facts | [done]: beta did Draft summary', 'the synthesizer saw both results, in order');

  const sessions = (await app.inject({ method: 'GET', url: '/api/v1/agents/beta/sessions' })).json();
  t.equal(sessions.sessions.length, 1, 'beta ran its task in one session of its own');
  t.match(sessions.sessions[0].session_id, new RegExp(`^${run.team_run_id}-b$`));
});
