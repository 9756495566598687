import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { tempDir } from '../helpers/app.ts';
import { agentApp, listen, parseSse, readSse, until, type Ev } from './helpers.ts';

const run = promisify(execFile);
type T = { test(name: string, fn: (t: any) => Promise<void>): unknown };

const create = async (app: FastifyInstance, spec: Record<string, unknown>) => {
  const r = await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { model: 'm', ...spec } });
  if (r.statusCode !== 201) throw new Error(`create failed: ${r.body}`);
};
const chat = async (app: FastifyInstance, agent: string, message: string, session_id?: string) => {
  const r = await app.inject({
    method: 'POST',
    url: `/api/v1/agents/${agent}/chat`,
    payload: { message, ...(session_id ? { session_id } : {}) },
  });
  if (r.statusCode !== 200) throw new Error(`chat failed: ${r.body}`);
  return r.json() as { response: string; session_id: string; tools_called: string[]; turns_used: number };
};
const startStream = (base: string, agent: string, body: Record<string, unknown>, signal: AbortSignal) =>
  fetch(`${base}/api/v1/agents/${agent}/chat/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

/**
 * The "Done when", with the scripted LLM, once per memory provider type;
 * `default` runs it with no memory configuration at all (noop mode).
 */
export function doneWhen(t: T, memory: string): void {
  t.test(`[${memory}] remembers a fact in one session and recalls it in another`, async (t) => {
    const app = await agentApp(t, {
      memory,
      script: [
        {
          match: 'my favourite colour is',
          turns: [
            { tool_calls: [{ name: 'remember', input: { key: 'favourite_colour', content: '{{user}}' } }] },
            { content: 'I will remember that.' },
          ],
        },
        {
          match: 'what is my favourite colour',
          turns: [
            { tool_calls: [{ name: 'recall', input: { key: 'favourite_colour' } }] },
            { content: 'You told me: {{tool_result}}' },
          ],
        },
      ],
    });
    await create(app, { name: 'mem', primitives: { memory: { enabled: true } } });
    const first = await chat(app, 'mem', 'My favourite colour is teal.', 'monday');
    t.equal(first.response, 'I will remember that.');
    t.same(first.tools_called, ['remember']);
    const second = await chat(app, 'mem', 'What is my favourite colour?', 'tuesday');
    t.equal(second.session_id, 'tuesday');
    t.same(second.tools_called, ['recall']);
    t.match(
      second.response,
      /^You told me: .*My favourite colour is teal\./,
      'recall in the second session returned the fact stored in the first',
    );
    const tuesday = (await app.inject({ url: '/api/v1/agents/mem/sessions/tuesday' })).json();
    t.equal(tuesday.messages.length, 2, 'the second session did not carry the first one as history');
    const view = (await app.inject({ url: '/api/v1/agents/mem/memory' })).json();
    const expected = memory === 'default' ? app.sb.providers.defaultName('memory') : memory;
    t.match(view, {
      agent_name: 'mem',
      memory_enabled: true,
      provider: expected,
      stores: [
        {
          namespace: 'agent:mem',
          shared: false,
          total: 1,
          records: [{ key: 'favourite_colour', content: 'My favourite colour is teal.' }],
        },
      ],
    });
    const tools = (await app.inject({ url: '/api/v1/agents/mem/tools' })).json().tools;
    t.same(
      tools.map((x: { name: string }) => x.name),
      ['remember', 'recall', 'search_memory', 'forget', 'list_memories'],
    );
    t.ok(
      tools.every((x: { primitive: string; provider: string }) => x.primitive === 'memory' && x.provider === expected),
    );
  });

  t.test(`[${memory}] shared-memory tools and the metadata denylist on tool output`, async (t) => {
    const app = await agentApp(t, {
      memory,
      config: { metadata_denylists: { memory: ['secret'] } },
      script: [
        {
          match: 'recall pre',
          turns: [{ tool_calls: [{ name: 'recall', input: { key: 'pre' } }] }, { content: '{{tool_result}}' }],
        },
        {
          match: 'share',
          turns: [
            { tool_calls: [{ name: 'share_finding', input: { key: 'f1', content: 'found it' } }] },
            {
              tool_calls: [
                { name: 'read_shared', input: { key: 'f1' } },
                { name: 'list_shared', input: {} },
                { name: 'read_shared', input: { key: 'f1', namespace: 'elsewhere' } },
              ],
            },
            { content: '{{tool_result}}' },
          ],
        },
      ],
    });
    await create(app, { name: 'sharer', primitives: { memory: { enabled: true } }, shared_namespaces: ['team-pool'] });
    const mem = app.sb.providers.get('memory') as unknown as {
      store(ns: string, r: Record<string, unknown>): Promise<unknown>;
    };
    await mem.store('agent:sharer', {
      key: 'pre',
      content: 'stored before',
      metadata: { secret: 'hide me', visible: 'show me' },
    });
    const recalled = JSON.parse((await chat(app, 'sharer', 'recall pre')).response);
    t.same(recalled.metadata, { visible: 'show me' }, 'denylisted metadata keys are stripped from tool output');
    const [read, listed, outside] = (await chat(app, 'sharer', 'share it')).response.split('\n');
    t.match(JSON.parse(read!), { key: 'f1', content: 'found it' });
    t.match(JSON.parse(listed!), { total: 1, records: [{ key: 'f1' }] });
    t.match(outside, /^Error: 'elsewhere' is not one of this agent's shared namespaces/);
    const view = (await app.inject({ url: '/api/v1/agents/sharer/memory' })).json();
    t.same(
      view.stores.map((s: { namespace: string; shared: boolean }) => [s.namespace, s.shared]),
      [
        ['agent:sharer', false],
        ['team-pool', true],
      ],
    );
    t.notMatch(JSON.stringify(view), /hide me/, 'the memory view applies the denylist too');
  });

  // Two model calls 150 ms apart: the client leaves after the first token, the second call still happens.
  const twoStep = [
    { turns: [{ content: 'Step one. ', tool_calls: [{ name: 'think', input: {} }] }, { content: 'Step two done.' }] },
  ];

  t.test(`[${memory}] streams a run that survives a client disconnect and is reconnected`, async (t) => {
    const app = await agentApp(t, { memory, store: 'sqlite', script: twoStep, delay_ms: 150 });
    await create(app, { name: 'slow' });
    const base = await listen(t, app);
    const abort = new AbortController();
    const res = await startStream(base, 'slow', { message: 'count', session_id: 'dc' }, abort.signal);
    t.equal(res.status, 200);
    const seen = await readSse(res, (ev) => ev.type === 'token', abort);
    t.same(
      seen.map((e) => e.type),
      ['stream_start', 'token'],
      'the client left after the first token',
    );
    t.equal(
      (await app.inject({ url: '/api/v1/agents/slow/sessions/dc/status' })).json().status,
      'running',
      'the run keeps going without its client',
    );

    const replay = await readSse(await fetch(`${base}/api/v1/agents/slow/sessions/dc/stream`));
    t.equal(replay[0]!.type, 'stream_start', 'reconnect replays from the start');
    t.ok(
      replay.some((e) => e.type === 'tool_call_result' && String(e.result).startsWith("Error: unknown tool 'think'")),
      'tool events are in the log',
    );
    t.match(
      replay.at(-1),
      { type: 'done', response: 'Step two done.', turns_used: 2 },
      'then follows the live run to its end',
    );
    t.equal(
      replay
        .filter((e) => e.type === 'token')
        .map((e) => e.content)
        .join(''),
      'Step one. Step two done.',
    );
    t.equal(
      await until(
        () => app.inject({ url: '/api/v1/agents/slow/sessions/dc/status' }).then((r) => r.json().status),
        (s) => s === 'idle',
      ),
      'idle',
    );
    const hist = (await app.inject({ url: '/api/v1/agents/slow/sessions/dc' })).json();
    t.same(
      hist.messages,
      [
        { role: 'user', content: 'count' },
        { role: 'assistant', content: 'Step two done.' },
      ],
      'the turn was stored although the client had gone',
    );
  });

  t.test(`[${memory}] a reconnected run is cancelled; history is kept up to the cancel point`, async (t) => {
    const app = await agentApp(t, { memory, store: 'sqlite', script: twoStep, delay_ms: 400 });
    await create(app, { name: 'slow' });
    const base = await listen(t, app);
    const abort = new AbortController();
    await readSse(
      await startStream(base, 'slow', { message: 'recite', session_id: 'cx' }, abort.signal),
      (ev) => ev.type === 'token',
      abort,
    );
    const re = await fetch(`${base}/api/v1/agents/slow/sessions/cx/stream`);
    t.equal(re.status, 200);
    const reconnect = readSse(re);
    const cancel = await app.inject({ method: 'DELETE', url: '/api/v1/agents/slow/sessions/cx/run' });
    t.equal(cancel.statusCode, 200, cancel.body);
    t.equal(cancel.json().status, 'cancelled');
    const evs: Ev[] = await reconnect;
    t.equal(evs[0]!.type, 'stream_start');
    t.equal(evs.at(-1)!.type, 'cancelled', 'the reconnected stream ends with `cancelled`');
    t.notOk(evs.some((e) => e.type === 'done'));
    t.equal((await app.inject({ url: '/api/v1/agents/slow/sessions/cx/status' })).json().status, 'idle');
    const hist = (await app.inject({ url: '/api/v1/agents/slow/sessions/cx' })).json().messages;
    t.same(
      hist,
      [
        { role: 'user', content: 'recite' },
        { role: 'assistant', content: 'Step one. ' },
      ],
      'the text streamed before the cancel is kept, nothing after',
    );
    t.equal(
      (await app.inject({ method: 'DELETE', url: '/api/v1/agents/slow/sessions/cx/run' })).statusCode,
      404,
      'nothing left to cancel',
    );
  });

  t.test(`[${memory}] delegates to a sub-agent; its events surface in the parent stream`, async (t) => {
    const app = await agentApp(t, {
      memory,
      script: [
        {
          match: 'find x',
          turns: [
            { tool_calls: [{ name: 'call_researcher', input: { message: 'What is X?' }, id: 'd1' }] },
            { content: 'The answer: {{tool_result}}' },
          ],
        },
        {
          match: 'what is x',
          turns: [{ tool_calls: [{ name: 'nothing', input: {} }] }, { content: 'X is forty-two' }],
        },
      ],
    });
    await create(app, { name: 'researcher', description: 'Finds facts' });
    await create(app, { name: 'lead', primitives: { agents: { enabled: true, tools: ['researcher'] } } });
    const evs = parseSse(
      (
        await app.inject({
          method: 'POST',
          url: '/api/v1/agents/lead/chat/stream',
          payload: { message: 'Find X', session_id: 'del' },
        })
      ).body,
    );
    t.match(
      evs.find((e) => e.type === 'tool_call_start'),
      { name: 'call_researcher', id: 'd1' },
    );
    const sub = evs.filter((e) => e.type === 'sub_agent_token');
    t.ok(sub.length > 0 && sub.every((e) => e.agent === 'researcher'));
    t.equal(sub.map((e) => e.content).join(''), 'X is forty-two');
    t.match(
      evs.find((e) => e.type === 'sub_agent_tool'),
      { agent: 'researcher', name: 'nothing' },
    );
    t.match(
      evs.find((e) => e.type === 'tool_call_result'),
      { name: 'call_researcher', result: 'X is forty-two' },
    );
    t.match(evs.at(-1), {
      type: 'done',
      response: 'The answer: X is forty-two',
      tools_called: ['call_researcher'],
      turns_used: 2,
    });
  });

  t.test(`[${memory}] the exported script runs with python3 and gives the server's answer`, async (t) => {
    const app = await agentApp(t, {
      memory,
      script: [
        {
          match: 'make a plan',
          turns: [
            {
              tool_calls: [
                { name: 'remember', input: { key: 'plan', content: 'ship it' } },
                { name: 'call_helper', input: { message: 'check the plan' } },
                { name: 'share_finding', input: { key: 'plan', content: 'shared plan' } },
              ],
            },
            { tool_calls: [{ name: 'recall', input: { key: 'plan' } }] },
            { content: 'Final: {{tool_result}}' },
          ],
        },
        { match: 'check the plan', content: 'plan looks fine' },
      ],
    });
    await create(app, { name: 'helper', description: 'Checks plans' });
    await create(app, {
      name: 'exp',
      primitives: { memory: { enabled: true }, agents: { enabled: true, tools: ['helper'] } },
      shared_namespaces: ['team'],
    });
    const server = await chat(app, 'exp', 'Make a plan', 'srv');
    t.match(server.response, /^Final: .*"content":"ship it"/, 'the answer carries what recall found');
    t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/memory/agent%3Aexp/plan' })).statusCode < 300, true);
    t.equal(
      (await app.inject({ method: 'DELETE', url: '/api/v1/memory/team/plan' })).statusCode < 300,
      true,
      'the server-side run shared its finding',
    );

    const base = await listen(t, app);
    const exp = await fetch(`${base}/api/v1/agents/exp/export`);
    t.equal(exp.status, 200);
    t.match(exp.headers.get('content-type'), /^text\/x-python/);
    t.match(exp.headers.get('content-disposition'), /^attachment; filename="exp\.py"/);
    const script = await exp.text();
    for (const name of ['def remember', 'share_finding', 'call_', 'TOKEN_URL', 'LazySession', 'atexit'])
      t.match(script, name);
    const file = join(tempDir('sb-export-'), 'exp.py');
    writeFileSync(file, script);
    const out = await run('python3', ['-I', file, '--json', '--session', 'py', 'Make a plan'], {
      env: { PATH: process.env.PATH, SWITCHBOARD_URL: base },
      timeout: 30_000,
    });
    const result = JSON.parse(out.stdout.trim()) as {
      response: string;
      tools_called: string[];
      turns_used: number;
      session_id: string;
    };
    const strip = (s: string) => s.replace(/"updated_at":"[^"]*"/, '');
    t.equal(
      strip(result.response),
      strip(server.response),
      "same answer as the server-side chat (the recalled record's timestamp aside)",
    );
    t.same(result.tools_called, server.tools_called);
    t.equal(result.turns_used, server.turns_used);
    const events = JSON.stringify((await app.inject({ url: '/api/v1/memory/sessions/noop/py/events' })).json());
    t.ok(
      events.includes('Make a plan') && events.includes('Final: '),
      'the script stored the turn as a memory event (auto_memory)',
    );
    t.equal(
      (await app.inject({ url: '/api/v1/memory/agent%3Aexp/plan' })).statusCode,
      200,
      "the script's remember wrote through the memory API",
    );
    t.match(
      (await app.inject({ url: '/api/v1/memory/team/plan' })).json(),
      { content: 'shared plan' },
      'and its share_finding wrote to the shared pool',
    );
  });
}
