import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { makeApp, tempDir } from '../helpers/app.ts';

interface ChatCall {
  agent: string;
  message: string;
  session_id: string;
  apiKey: string | undefined;
}

const PLAN = [
  { id: 't1', title: 'Collect sources', description: 'find three papers', assigned_to: 'alpha', depends_on: [] },
  { id: 't2', title: 'Summarize', description: 'summarize the papers', assigned_to: 'beta', depends_on: ['t1'] },
  { id: 't3', title: 'Lost', description: 'nobody can do this', assigned_to: 'ghost', depends_on: [] },
  { id: 't4', title: 'After lost', description: 'waits on t3', assigned_to: 'alpha', depends_on: ['t3'] },
];

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
}

/**
 * A wire-compatible stand-in for the gateway's agent chat and memory endpoints
 * on loopback: the planner answers a fixed plan, workers echo their task, the
 * synthesizer echoes what it was given. Every call is recorded.
 */
async function fakeGateway(t: Test, workerDelayMs = 0) {
  const chats: ChatCall[] = [];
  const memory: Array<{ namespace: string; key: string; content: string }> = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const send = (status: number, json: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    const chat = url.pathname.match(/^\/api\/v1\/agents\/([^/]+)\/chat$/);
    const mem = url.pathname.match(/^\/api\/v1\/memory\/([^/]+)$/);
    if (chat && req.method === 'POST') {
      const b = await body(req);
      const agent = decodeURIComponent(chat[1]!);
      chats.push({
        agent,
        message: String(b.message),
        session_id: String(b.session_id),
        apiKey: req.headers['x-api-key'] as string | undefined,
      });
      if (workerDelayMs && agent !== 'planner' && agent !== 'writer')
        await new Promise((r) => setTimeout(r, workerDelayMs));
      const title = /Task \S+: (.*)/.exec(String(b.message))?.[1];
      const response =
        agent === 'planner'
          ? `Here is the plan:\n${JSON.stringify(PLAN)}\nGood luck.`
          : agent === 'writer'
            ? `FINAL <<${String(b.message)}>>`
            : `${agent} did ${title}`;
      return send(200, {
        response,
        session_id: b.session_id,
        agent_name: agent,
        turns_used: 1,
        tools_called: [],
        artifacts: [],
        metadata: {},
      });
    }
    if (mem && req.method === 'POST') {
      const b = await body(req);
      memory.push({ namespace: decodeURIComponent(mem[1]!), key: String(b.key), content: String(b.content) });
      return send(201, b);
    }
    if (mem && req.method === 'GET') {
      const records = memory.filter((m) => m.namespace === decodeURIComponent(mem[1]!));
      return send(200, { records, total: records.length });
    }
    send(404, { detail: 'no route' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, chats, memory };
}

function runScript(
  file: string,
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'python3',
      [file, ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

async function exportScript(t: Test, team: Record<string, unknown>): Promise<string> {
  const app = await makeApp(t);
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/teams', payload: team })).statusCode, 201);
  const res = await app.inject({ method: 'GET', url: `/api/v1/teams/${String(team.name)}/export` });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/x-python/);
  t.equal(res.headers['content-disposition'], `attachment; filename="${String(team.name)}.py"`);
  const file = join(tempDir('sb-team-export-'), `${String(team.name)}.py`);
  writeFileSync(file, res.body);
  return file;
}

const TEAM = {
  name: 'research',
  planner: 'planner',
  synthesizer: 'writer',
  workers: ['alpha', 'beta'],
  shared_memory_namespace: 'team:{team_name}',
};

t.test('the exported script runs the team against the gateway API', async (t) => {
  const gw = await fakeGateway(t);
  const file = await exportScript(t, TEAM);
  // Replanning off here (SWITCHBOARD_MAX_REPLANS=0): this test follows one plan; teams-export-live.test.ts covers a replanning round.
  const out = await runScript(
    file,
    { SWITCHBOARD_URL: gw.url, SWITCHBOARD_API_KEY: 'k', SWITCHBOARD_MAX_REPLANS: '0' },
    ['--json', 'find', 'papers'],
  );
  t.equal(out.code, 0, out.stderr);
  const result = JSON.parse(out.stdout);
  t.match(result, {
    team_name: 'research',
    phase: 'done',
    tasks_created: 4,
    tasks_completed: 2,
    workers_used: ['alpha', 'beta'],
    team_run_id: /^[0-9a-f-]{36}$/,
  });
  const byId = Object.fromEntries((result.tasks as Array<{ id: string }>).map((x) => [x.id, x]));
  t.match(byId.t1, { status: 'done', result: 'alpha did Collect sources' });
  t.match(byId.t2, { status: 'done', result: 'beta did Summarize' });
  t.match(
    byId.t3,
    { status: 'failed', result: /unknown worker 'ghost'/ },
    'a task for an unknown worker fails instead of waiting',
  );
  t.match(byId.t4, { status: 'failed', result: "dependency 't3' failed" });

  t.same(
    gw.chats.map((c) => c.agent),
    ['planner', 'alpha', 'beta', 'writer'],
    'planner, then t1 before the task that depends on it, then the synthesizer',
  );
  t.match(gw.chats[0]!.message, /find papers/);
  t.match(gw.chats[0]!.message, /alpha, beta/, 'the planner is told the workers');
  t.match(
    gw.chats[2]!.message,
    /Result of t1 \(Collect sources\):\nalpha did Collect sources/,
    'a dependency result reaches the dependent task',
  );
  t.match(
    gw.chats[2]!.message,
    /Shared findings of the team:\n- alpha did Collect sources/,
    'shared findings are read from the namespace',
  );
  t.match(gw.chats[3]!.message, /t1 Collect sources \[done\]: alpha did Collect sources/);
  t.match(gw.chats[3]!.message, /t3 Lost \[failed\]/);
  t.equal(result.response, `FINAL <<${gw.chats[3]!.message}>>`);
  const sessions = gw.chats.map((c) => c.session_id);
  t.equal(new Set(sessions).size, 4, 'one session per task, planner and synthesizer');
  t.ok(
    sessions.every((s) => s.startsWith(result.team_run_id)),
    'sessions are named after the run',
  );
  t.ok(
    gw.chats.every((c) => c.apiKey === 'k'),
    'SWITCHBOARD_API_KEY is sent as X-Api-Key',
  );
  t.same(
    gw.memory.map((m) => [m.namespace, m.key, m.content]),
    [
      ['team:research', `${result.team_run_id}:t1`, 'alpha did Collect sources'],
      ['team:research', `${result.team_run_id}:t2`, 'beta did Summarize'],
    ],
    'results go to the expanded shared namespace',
  );
  t.match(out.stderr, /execution: 4 tasks created/, 'the live task board is printed to stderr');
});

t.test('the script enforces global_max_turns', async (t) => {
  const gw = await fakeGateway(t);
  const file = await exportScript(t, { ...TEAM, name: 'tight', global_max_turns: 2, shared_memory_namespace: null });
  const out = await runScript(file, { SWITCHBOARD_URL: gw.url, SWITCHBOARD_QUIET: '1' }, ['--json', 'go']);
  t.equal(out.code, 0, out.stderr);
  const result = JSON.parse(out.stdout);
  const t2 = (result.tasks as Array<{ id: string; status: string; result: string }>).find((x) => x.id === 't2');
  t.match(t2, { status: 'failed', result: /global_max_turns \(2\) reached/ }, 'planner + t1 used the budget');
  t.equal(result.tasks_completed, 1);
  t.equal(gw.memory.length, 0, 'no namespace, no shared memory');
  t.equal(out.stderr, '', 'SWITCHBOARD_QUIET silences the board');
});

t.test('the script enforces global_timeout_seconds over the whole run', async (t) => {
  // Workers answer after 3 s; the team allows 1 s in total, so the worker call is cut off and no synthesis happens.
  const gw = await fakeGateway(t, 3000);
  const file = await exportScript(t, {
    ...TEAM,
    name: 'hurried',
    global_timeout_seconds: 1,
    shared_memory_namespace: null,
  });
  const out = await runScript(file, { SWITCHBOARD_URL: gw.url, SWITCHBOARD_QUIET: '1' }, ['go']);
  t.equal(out.code, 1);
  t.match(out.stderr, /team run failed: global_timeout_seconds \(1\) reached/);
  t.notOk(
    gw.chats.some((c) => c.agent === 'writer'),
    'the synthesizer is not called after the deadline',
  );
});

t.test('an unreachable gateway is a clear failure, exit code 1', async (t) => {
  const file = await exportScript(t, TEAM);
  const out = await runScript(file, { SWITCHBOARD_URL: 'http://127.0.0.1:1', SWITCHBOARD_QUIET: '1' }, ['hello']);
  t.equal(out.code, 1);
  t.match(out.stderr, /team run failed/);
});
