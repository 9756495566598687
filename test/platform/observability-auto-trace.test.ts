import t from 'tap';
import { openStore } from '../../core/store.ts';
import { agentApp } from '../agents/helpers.ts';
import { tempDir } from '../helpers/app.ts';

t.setTimeout(900_000);

const script = [
  {
    match: 'remember',
    turns: [
      { tool_calls: [{ name: 'remember', input: { key: 'colour', content: 'blue' } }] },
      { tool_calls: [{ name: 'recall', input: { key: 'colour' } }] },
      { content: 'I remember: {{tool_result}}' },
    ],
  },
];

t.test(
  'auto_trace on the store provider: one trace per run, a generation per LLM turn, a span per tool call, kept across a restart',
  async (t) => {
    const dataDir = tempDir('sb-auto-trace-');
    const first = await openStore({ backend: 'sqlite', dataDir });
    const app = await agentApp(t, { script, memory: 'in_memory', store: first });
    t.equal(app.sb.providers.defaultName('observability'), 'store', 'store is the default observability provider');
    await app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      payload: { name: 'keeper', model: 'm', primitives: { memory: { enabled: true } } },
    });
    const r = await app.inject({
      method: 'POST',
      url: '/api/v1/agents/keeper/chat',
      payload: { message: 'remember my colour', session_id: 'sess-1' },
    });
    t.equal(r.statusCode, 200, r.body);
    const traceId = r.json().metadata.trace_id as string;
    t.ok(traceId, 'the chat names its trace');
    await app.close();
    await first.close();

    // A new process on the same SQLite file.
    const second = await openStore({ backend: 'sqlite', dataDir });
    t.teardown(() => second.close());
    const again = await agentApp(t, { script, memory: 'in_memory', store: second });
    const got = await again.inject({ url: `/api/v1/observability/traces/${traceId}` });
    t.equal(got.statusCode, 200, got.body);
    const trace = got.json();
    t.match(trace, {
      name: 'agent:keeper',
      session_id: 'sess-1',
      input: 'remember my colour',
      output: /^I remember: /,
      metadata: { agent_name: 'keeper', turns_used: 3 },
    });
    const kinds = trace.spans.map((s: { metadata: { type: string } }) => s.metadata.type);
    t.same(kinds, ['generation', 'tool', 'generation', 'tool', 'generation'], 'three LLM turns, two tool calls');
    t.same(
      trace.spans
        .filter((s: { metadata: { type: string } }) => s.metadata.type === 'tool')
        .map((s: { name: string }) => s.name),
      ['remember', 'recall'],
    );
    const gens = await again.inject({ url: `/api/v1/observability/generations?trace_id=${traceId}` });
    t.equal(gens.json().total, 3, 'one generation per LLM turn');
    for (const g of gens.json().generations)
      t.match(g, { model: 'm', usage: { input_tokens: Number, output_tokens: Number } }, 'with usage');
    const session = await again.inject({ url: '/api/v1/observability/sessions/sess-1' });
    t.equal(session.statusCode, 200, session.body);
    t.match(session.json().session, { session_id: 'sess-1', trace_count: 1, total_tokens: Number });
    t.ok(session.json().session.total_tokens > 0, 'tokens summed from the generations');
    const sessions = await again.inject({ url: '/api/v1/observability/sessions' });
    t.match(sessions.json().sessions, [{ session_id: 'sess-1', trace_count: 1 }]);
  },
);

t.test('auto_trace off: no trace is written', async (t) => {
  const app = await agentApp(t, { script: [{ content: 'hi' }] });
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: { name: 'quiet', model: 'm', hooks: { auto_trace: false } },
  });
  const r = await app.inject({ method: 'POST', url: '/api/v1/agents/quiet/chat', payload: { message: 'x' } });
  t.notOk('trace_id' in r.json().metadata);
  t.equal((await app.inject({ url: '/api/v1/observability/traces' })).json().total, 0);
});
