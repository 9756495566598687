import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { tempDir } from '../helpers/app.ts';
import { agentApp, listen, llmRequests, parseSse, readSse, until, type Ev } from './helpers.ts';

const run = promisify(execFile);
const call = (id: string, name: string, input: Record<string, unknown>) => ({ id, name, input });
type T = { test(name: string, fn: (t: any) => Promise<void>): unknown };

const create = async (app: FastifyInstance, spec: Record<string, unknown>) => {
  const r = await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { model: 'm', ...spec } });
  if (r.statusCode !== 201) throw new Error(`create failed: ${r.body}`);
};
const chat = async (app: FastifyInstance, agent: string, message: string, session_id?: string) => {
  const r = await app.inject({ method: 'POST', url: `/api/v1/agents/${agent}/chat`, payload: { message, ...(session_id ? { session_id } : {}) } });
  if (r.statusCode !== 200) throw new Error(`chat failed: ${r.body}`);
  return r.json() as { response: string; session_id: string; tools_called: string[]; turns_used: number };
};
const lastToolResults = (app: FastifyInstance, i: number) =>
  ((llmRequests(app)[i]!.messages.at(-1) as { tool_results?: Array<{ content: string }> }).tool_results ?? []).map((r) => r.content);

/** The "Done when", run once per memory provider type. */
export function doneWhen(t: T, memory: string): void {
  t.test(`[${memory}] remembers a fact in one session and recalls it in another`, async (t) => {
    const app = await agentApp(t, {
      memory,
      steps: [
        { tool_calls: [call('t1', 'remember', { key: 'favourite_colour', content: 'teal' })] },
        { content: 'I will remember that.' },
        { tool_calls: [call('t2', 'recall', { key: 'favourite_colour' })] },
        { content: 'Your favourite colour is teal.' },
      ],
    });
    await create(app, { name: 'mem', primitives: { memory: { enabled: true } } });
    const first = await chat(app, 'mem', 'My favourite colour is teal.', 'monday');
    t.same(first.tools_called, ['remember']);
    t.same(lastToolResults(app, 1), ["Remembered 'favourite_colour'."]);
    const second = await chat(app, 'mem', 'What is my favourite colour?', 'tuesday');
    t.equal(second.session_id, 'tuesday');
    t.same(second.tools_called, ['recall']);
    const recalled = lastToolResults(app, 3)[0]!;
    t.match(JSON.parse(recalled), { key: 'favourite_colour', content: 'teal' }, 'recall in the second session returned the stored fact');
    t.notMatch(JSON.stringify(llmRequests(app)[2]!.messages), /teal/, 'the second session did not carry the first one as history');
    const view = (await app.inject({ url: '/api/v1/agents/mem/memory' })).json();
    t.match(view, { agent_name: 'mem', memory_enabled: true, provider: memory, stores: [{ namespace: 'agent:mem', shared: false, total: 1, records: [{ key: 'favourite_colour', content: 'teal' }] }] });
    const tools = (await app.inject({ url: '/api/v1/agents/mem/tools' })).json().tools;
    t.same(tools.map((x: { name: string }) => x.name), ['remember', 'recall', 'search_memory', 'forget', 'list_memories']);
    t.ok(tools.every((x: { primitive: string; provider: string }) => x.primitive === 'memory' && x.provider === memory));
  });

  t.test(`[${memory}] shared-memory tools and the metadata denylist on tool output`, async (t) => {
    const app = await agentApp(t, {
      memory,
      config: { metadata_denylists: { memory: ['secret'] } },
      steps: [
        { tool_calls: [call('s1', 'share_finding', { key: 'f1', content: 'found it' }), call('s2', 'recall', { key: 'pre' })] },
        { tool_calls: [call('s3', 'read_shared', { key: 'f1' }), call('s4', 'list_shared', {}), call('s5', 'read_shared', { key: 'f1', namespace: 'elsewhere' })] },
        { content: 'ok' },
      ],
    });
    await create(app, { name: 'sharer', primitives: { memory: { enabled: true } }, shared_namespaces: ['team-pool'] });
    const mem = app.sb.providers.get('memory') as unknown as { store(ns: string, r: Record<string, unknown>): Promise<unknown> };
    await mem.store('agent:sharer', { key: 'pre', content: 'stored before', metadata: { secret: 'hide me', visible: 'show me' } });
    t.equal((await chat(app, 'sharer', 'share')).response, 'ok');
    const [shared, recalled] = lastToolResults(app, 1);
    t.equal(shared, "Shared 'f1' in 'team-pool'.");
    const rec = JSON.parse(recalled!);
    t.same(rec.metadata, { visible: 'show me' }, 'denylisted metadata keys are stripped from tool output');
    const [read, listed, outside] = lastToolResults(app, 2);
    t.match(JSON.parse(read!), { key: 'f1', content: 'found it' });
    t.match(JSON.parse(listed!), { total: 1, records: [{ key: 'f1' }] });
    t.match(outside, /^Error: 'elsewhere' is not one of this agent's shared namespaces/);
    const view = (await app.inject({ url: '/api/v1/agents/sharer/memory' })).json();
    t.same(view.stores.map((s: { namespace: string; shared: boolean }) => [s.namespace, s.shared]), [['agent:sharer', false], ['team-pool', true]]);
    t.notMatch(JSON.stringify(view), /hide me/, 'the memory view applies the denylist too');
  });

  t.test(`[${memory}] streams a run that survives a client disconnect and is reconnected`, async (t) => {
    const text = 'one two three four five six';
    const app = await agentApp(t, { memory, store: 'sqlite', steps: [{ content: text, chunks: 6, delay_ms: 60 }] });
    await create(app, { name: 'slow' });
    const base = await listen(t, app);
    const abort = new AbortController();
    const res = await fetch(`${base}/api/v1/agents/slow/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'count', session_id: 'dc' }),
      signal: abort.signal,
    });
    t.equal(res.status, 200);
    const seen = await readSse(res, (ev) => ev.type === 'token', abort);
    t.same(seen.map((e) => e.type), ['stream_start', 'token'], 'the client left after the first token');
    t.equal((await app.inject({ url: '/api/v1/agents/slow/sessions/dc/status' })).json().status, 'running', 'the run keeps going without its client');

    const re = await fetch(`${base}/api/v1/agents/slow/sessions/dc/stream`);
    const replay = await readSse(re);
    t.equal(replay[0]!.type, 'stream_start', 'reconnect replays from the start');
    t.equal(replay.at(-1)!.type, 'done', 'then follows the live run to its end');
    t.equal(replay.filter((e) => e.type === 'token').map((e) => e.content).join(''), text);
    t.equal(replay.at(-1)!.response, text);
    const status = await until(() => app.inject({ url: '/api/v1/agents/slow/sessions/dc/status' }).then((r) => r.json().status), (s) => s === 'idle');
    t.equal(status, 'idle');
    const hist = (await app.inject({ url: '/api/v1/agents/slow/sessions/dc' })).json();
    t.same(hist.messages, [{ role: 'user', content: 'count' }, { role: 'assistant', content: text }], 'the turn was stored although the client had gone');
  });

  t.test(`[${memory}] a reconnected run is cancelled; history is kept up to the cancel point`, async (t) => {
    const text = 'alpha beta gamma delta epsilon zeta eta theta';
    const app = await agentApp(t, { memory, store: 'sqlite', steps: [{ content: text, chunks: 8, delay_ms: 80 }] });
    await create(app, { name: 'slow' });
    const base = await listen(t, app);
    const abort = new AbortController();
    const res = await fetch(`${base}/api/v1/agents/slow/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'recite', session_id: 'cx' }),
      signal: abort.signal,
    });
    await readSse(res, (_ev, all) => all.filter((e) => e.type === 'token').length === 2, abort);
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
    const hist = (await app.inject({ url: '/api/v1/agents/slow/sessions/cx' })).json().messages as Array<{ role: string; content: string }>;
    t.same(hist[0], { role: 'user', content: 'recite' });
    const partial = hist[1]?.content ?? '';
    t.ok(partial.length > 0 && partial.length < text.length && text.startsWith(partial), `partial answer kept: '${partial}'`);
    t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/agents/slow/sessions/cx/run' })).statusCode, 404, 'nothing left to cancel');
  });

  t.test(`[${memory}] delegates to a sub-agent; its events surface in the parent stream`, async (t) => {
    const app = await agentApp(t, {
      memory,
      steps: [{ tool_calls: [call('d1', 'call_researcher', { message: 'What is X?' })] }, { content: 'X is 42', chunks: 2 }, { content: 'The answer is 42.' }],
    });
    await create(app, { name: 'researcher', description: 'Finds facts' });
    await create(app, { name: 'lead', primitives: { agents: { enabled: true, tools: ['researcher'] } } });
    const r = await app.inject({ method: 'POST', url: '/api/v1/agents/lead/chat/stream', payload: { message: 'Find X', session_id: 'del' } });
    const evs = parseSse(r.body);
    t.match(evs.find((e) => e.type === 'tool_call_start'), { name: 'call_researcher', id: 'd1' });
    const sub = evs.filter((e) => e.type === 'sub_agent_token');
    t.equal(sub.length, 2);
    t.ok(sub.every((e) => e.agent === 'researcher'));
    t.equal(sub.map((e) => e.content).join(''), 'X is 42');
    t.match(evs.find((e) => e.type === 'tool_call_result'), { name: 'call_researcher', result: 'X is 42' });
    t.match(evs.at(-1), { type: 'done', response: 'The answer is 42.', tools_called: ['call_researcher'], turns_used: 2 });
    t.same(llmRequests(app)[1]!.messages, [{ role: 'user', content: 'What is X?' }], 'the sub-agent got the delegated message');
  });

  t.test(`[${memory}] the exported script runs with python3 and gives the server's answer`, async (t) => {
    const steps = [
      { tool_calls: [call('e1', 'remember', { key: 'plan', content: 'ship it' }), call('e2', 'call_helper', { message: 'check the plan' })] },
      { content: 'plan looks fine' },
      { content: 'Final: shipped.' },
    ];
    const app = await agentApp(t, { memory, steps });
    await create(app, { name: 'helper', description: 'Checks plans' });
    await create(app, { name: 'exp', primitives: { memory: { enabled: true }, agents: { enabled: true, tools: ['helper'] } }, shared_namespaces: ['team'] });
    const server = await chat(app, 'exp', 'Make a plan', 'srv');
    t.equal(server.response, 'Final: shipped.');
    const serverResults = lastToolResults(app, 2);
    t.same(serverResults, ["Remembered 'plan'.", 'plan looks fine']);
    await app.inject({ method: 'DELETE', url: '/api/v1/memory/agent%3Aexp/plan' });

    const base = await listen(t, app);
    const exp = await fetch(`${base}/api/v1/agents/exp/export`);
    t.equal(exp.status, 200);
    t.match(exp.headers.get('content-type'), /^text\/x-python/);
    t.match(exp.headers.get('content-disposition'), /^attachment; filename="exp\.py"/);
    const script = await exp.text();
    for (const name of ['def remember', 'share_finding', 'call_', 'TOKEN_URL', 'LazySession', 'atexit']) t.match(script, name);
    const file = join(tempDir('sb-export-'), 'exp.py');
    writeFileSync(file, script);
    const out = await run('python3', [file, '--json', '--session', 'py', 'Make a plan'], { env: { PATH: process.env.PATH, SWITCHBOARD_URL: base }, timeout: 30_000 });
    const result = JSON.parse(out.stdout.trim()) as { response: string; tools_called: string[]; turns_used: number; session_id: string };
    t.equal(result.response, server.response, 'same answer as the server-side chat');
    t.same(result.tools_called, server.tools_called);
    t.equal(result.turns_used, server.turns_used);
    t.same(lastToolResults(app, 5), serverResults, 'the script ran the same tools with the same results');
    const hist = (await app.inject({ url: '/api/v1/memory/sessions/noop/py/events' })).json();
    t.ok(JSON.stringify(hist).includes('Final: shipped.'), 'the script stored the turn as a memory event (auto_memory)');
  });
}
