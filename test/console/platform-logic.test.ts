import t from 'tap';
import {
  addUserMessage,
  applyEvent,
  emptyTranscript,
  fromHistory,
  type ChatEvent,
} from '../../ui/platform/chat-state.ts';
import {
  formOf,
  newSpec,
  parseSpecJson,
  placeErrors,
  requestBody,
  specOf,
  FORM_FIELDS,
} from '../../ui/platform/spec-form.ts';
import { parseSseChunk, readSse } from '../../ui/platform/sse.ts';
import { layoutTimeline, tokensOf } from '../../ui/platform/timeline.ts';

/** The console's platform pages keep their logic in plain modules; these cases pin it without a browser. */

t.test('SSE: events split across chunks, CRLF, comments and a last event without its blank line', async (t) => {
  const a = parseSseChunk('data: {"type":"token","content":"He"}\n\ndata: {"type":"tok');
  t.same(a.events, [{ type: 'token', content: 'He' }]);
  const b = parseSseChunk(`${a.rest}en","content":"llo"}\r\n\r\n: keep-alive\n\n`);
  t.same(b.events, [{ type: 'token', content: 'llo' }]);
  t.equal(b.rest, '');
  const enc = new TextEncoder();
  const parts = ['data: {"type":"stream_start","session_id":"s"}\n', '\ndata: not json\n\n', 'data: {"type":"done"}'];
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of parts) c.enqueue(enc.encode(p));
      c.close();
    },
  });
  const seen: unknown[] = [];
  for await (const ev of readSse(body)) seen.push(ev);
  t.same(seen, [{ type: 'stream_start', session_id: 's' }, { type: 'done' }], 'bad lines skipped, tail flushed');
});

t.test('chat transcript: tokens, tool calls in order, results, done with trace id', async (t) => {
  const evs: ChatEvent[] = [
    { type: 'stream_start', session_id: 's1' },
    { type: 'token', content: 'Let me ' },
    { type: 'token', content: 'look.' },
    { type: 'tool_call_start', name: 'remember', id: 'c1' },
    { type: 'tool_call_result', name: 'remember', id: 'c1', result: 'stored' },
    { type: 'token', content: ' Done.' },
    {
      type: 'done',
      response: 'Let me look. Done.',
      session_id: 's1',
      turns_used: 2,
      tools_called: ['remember'],
      metadata: { trace_id: 'tr-1' },
    },
  ];
  let tr = addUserMessage(emptyTranscript(), 'hi');
  tr = applyEvent(tr, evs[0]);
  t.equal(tr.state, 'streaming');
  tr = evs.slice(1, 4).reduce(applyEvent, tr);
  t.same(
    tr.messages[1].parts,
    [
      { kind: 'text', text: 'Let me look.' },
      { kind: 'tool', call: { id: 'c1', name: 'remember' } },
    ],
    'a running tool call has no result yet',
  );
  tr = evs.slice(4).reduce(applyEvent, tr);
  t.equal(tr.messages.length, 2, 'one user and one assistant message');
  t.same(tr.messages[1].parts[1], { kind: 'tool', call: { id: 'c1', name: 'remember', result: 'stored' } });
  t.same(tr.messages[1].parts[2], { kind: 'text', text: ' Done.' });
  t.equal(tr.state, 'done');
  t.equal(tr.trace_id, 'tr-1');
  t.equal(tr.session_id, 's1');
});

t.test('chat transcript: a sub-agent streams inside the parent answer', async (t) => {
  const evs: ChatEvent[] = [
    { type: 'stream_start', session_id: 's' },
    { type: 'token', content: 'Asking.' },
    { type: 'sub_agent_token', agent: 'researcher', content: 'Found ' },
    { type: 'sub_agent_token', agent: 'researcher', content: 'it.' },
    { type: 'sub_agent_tool', agent: 'researcher', name: 'recall' },
    { type: 'token', content: ' Done.' },
  ];
  const tr = evs.reduce(applyEvent, emptyTranscript());
  t.same(
    tr.messages[0].parts.map((p) =>
      p.kind === 'text' ? [p.agent ?? '', p.text] : ['tool', p.call.agent, p.call.name],
    ),
    [
      ['', 'Asking.'],
      ['researcher', 'Found it.'],
      ['tool', 'researcher', 'recall'],
      ['', ' Done.'],
    ],
  );
  const cancelled = applyEvent(tr, { type: 'cancelled' });
  t.equal(cancelled.state, 'cancelled');
  t.match(cancelled.notice, /cancelled/);
});

t.test('chat transcript: a late joiner sees the final answer; errors and history', async (t) => {
  const done: ChatEvent = {
    type: 'done',
    response: 'All done',
    session_id: 's',
    turns_used: 1,
    tools_called: [],
    metadata: {},
  };
  const late = applyEvent(emptyTranscript(), done);
  t.same(late.messages[0].parts, [{ kind: 'text', text: 'All done' }]);
  // A replay after reload follows the stored history: the run gets its own message after the last answer.
  const replay = applyEvent(
    {
      ...emptyTranscript(),
      messages: fromHistory([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ]),
    },
    { type: 'stream_start', session_id: 's' },
  );
  t.equal(replay.messages.length, 3);
  t.same(replay.messages[1].parts, [{ kind: 'text', text: 'a' }], 'the earlier answer is untouched');
  const err = applyEvent(emptyTranscript(), { type: 'error', detail: 'LLM down' });
  t.equal(err.state, 'error');
  t.equal(err.notice, 'LLM down');
  t.same(
    fromHistory([
      { role: 'user', content: 'q' },
      { role: 'tool', content: 'x' },
      { role: 'assistant', content: 'a' },
    ]).map((m) => m.role),
    ['user', 'assistant'],
  );
});

t.test('spec form: round trip keeps fields the form does not show; bodies drop server fields', async (t) => {
  const spec = {
    ...newSpec(),
    name: 'helper',
    model: 'm',
    primitives: { memory: { enabled: true, namespace: 'ns:{user_id}' }, browser: { enabled: true } },
    provider_overrides: { llm: 'scripted' },
    owner_id: 'alice',
    created_at: 'x',
  };
  const form = formOf(spec);
  t.equal(form.primitives.memory, true);
  form.primitives.browser = false;
  form.max_turns = 'lots';
  form.shared_with = ' *, team-a ,';
  const out = specOf(form, spec);
  t.same(out.primitives, { memory: { enabled: true, namespace: 'ns:{user_id}' }, browser: { enabled: false } });
  t.same(out.provider_overrides, { llm: 'scripted' });
  t.equal(out.max_turns, 'lots', 'not a number: sent as typed so the API names the field');
  t.same(out.shared_with, ['*', 'team-a']);
  const upd = requestBody(out, 'update');
  t.notOk('name' in upd || 'owner_id' in upd || 'created_at' in upd);
  t.equal(requestBody(out, 'create').name, 'helper');
  t.match(parseSpecJson('{"a":'), { error: /not valid/ });
  t.match(parseSpecJson('[]'), { error: /JSON object/ });
  t.same(parseSpecJson('{"a":1}'), { spec: { a: 1 } });
});

t.test('API errors are placed at their fields', async (t) => {
  const placed = placeErrors(
    [
      { loc: ['body', 'max_turns'], msg: 'must be integer', type: 'type' },
      { loc: ['body', 'primitives', 'memory', 'enabled'], msg: 'must be boolean', type: 'type' },
      { loc: ['body', 'colour'], msg: 'must NOT have additional properties', type: 'additionalProperties' },
      { loc: ['body'], msg: 'body is broken', type: 'x' },
    ],
    FORM_FIELDS,
  );
  t.same(placed.fields.max_turns, ['must be integer']);
  t.same(placed.fields.primitives, ['must be boolean (at memory.enabled)']);
  t.same(placed.top, ['colour: must NOT have additional properties', 'body is broken']);
  t.same(placeErrors("Agent 'x' already exists", FORM_FIELDS).top, ["Agent 'x' already exists"]);
});

t.test('timeline: offsets and widths on one axis; untimed spans listed last', async (t) => {
  const { bars, totalMs } = layoutTimeline([
    { name: 'untimed' },
    { name: 'b', start_time: '2026-01-01T00:00:01.000Z', end_time: '2026-01-01T00:00:02.000Z' },
    { name: 'a', start_time: '2026-01-01T00:00:00.000Z', end_time: '2026-01-01T00:00:04.000Z' },
  ]);
  t.equal(totalMs, 4000);
  t.same(
    bars.map((b) => [b.item.name, b.offset, b.width]),
    [
      ['a', 0, 1],
      ['b', 0.25, 0.25],
      ['untimed', undefined, undefined],
    ],
  );
  t.same(tokensOf({ prompt_tokens: 12, completion_tokens: 3 }), { input: 12, output: 3, total: 15 });
  t.same(tokensOf({ input_tokens: 5, output_tokens: 1, total_tokens: 7 }), { input: 5, output: 1, total: 7 });
});
