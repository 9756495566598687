import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { openStore } from '../../core/store.ts';
import type { LlmProvider } from '../../core/primitives/llm.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { noopLlm } from '../../providers/noop/llm.ts';
import { scriptedLlm } from '../../providers/scripted/index.ts';
import { llmConformance } from '../conformance/llm.ts';
import { tempDir } from '../helpers/app.ts';

const ctx = async (): Promise<ProviderContext> => ({
  store: await openStore({ backend: 'memory' }),
  logger: pino({ level: 'silent' }),
  dataDir: tempDir(),
  lookup: () => undefined,
});
const text = { messages: [{ role: 'user' as const, content: 'hello there' }] };
const tool = {
  messages: [{ role: 'user' as const, content: 'remember that I like tea' }],
  tools: [{ name: 'remember', input_schema: { type: 'object' } }],
};

const SCRIPT = [
  {
    match: 'remember that (.+)',
    turns: [{ tool_calls: [{ name: 'remember', input: { key: 'fact', content: '{{user}}' } }] }, { content: 'Noted.' }],
  },
  {
    match: 'what do you remember',
    turns: [{ tool_calls: [{ name: 'recall', input: { key: 'fact' } }] }, { content: 'You said: {{tool_result}}' }],
  },
  { content: 'Hello from the script, friend.' },
];

t.test('noop passes the llm conformance suite', async (t) =>
  llmConformance(t, {
    make: async () => noopLlm.create('noop', {}, await ctx()) as LlmProvider,
    textRequest: text,
    skip: [
      {
        reason: 'the noop LLM takes tools but never calls one',
        tests: ['a tool call is returned with parsed input and streamed as start, deltas, complete'],
      },
    ],
  }),
);

t.test('scripted passes the llm conformance suite', async (t) =>
  llmConformance(t, {
    make: async () => (await scriptedLlm.create('scripted', { responses: SCRIPT }, await ctx())) as LlmProvider,
    textRequest: text,
    toolRequest: tool,
    toolName: 'remember',
  }),
);

t.test('the noop answer is documented: "noop: <last user message>"', async (t) => {
  const llm = noopLlm.create('noop', {}, await ctx()) as LlmProvider;
  t.equal((await llm.complete({ messages: [{ role: 'user', content: 'ping' }] })).content, 'noop: ping');
});

t.test('a script plays its turns through one tool loop and fills templates', async (t) => {
  const llm = (await scriptedLlm.create('s', { responses: SCRIPT }, await ctx())) as LlmProvider;
  const first = await llm.complete(tool);
  t.same(
    first.tool_calls.map((c) => [c.name, c.input]),
    [['remember', { key: 'fact', content: 'remember that I like tea' }]],
  );
  t.equal(first.stop_reason, 'tool_use');
  const second = await llm.complete({
    messages: [
      ...tool.messages,
      { role: 'assistant', content: '', tool_calls: first.tool_calls },
      { role: 'user', content: '', tool_results: [{ tool_use_id: first.tool_calls[0].id, content: 'stored' }] },
    ],
  });
  t.equal(second.content, 'Noted.');
  t.equal(second.stop_reason, 'end_turn');
  const recall = await llm.complete({
    messages: [
      { role: 'user', content: 'What do you remember?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'recall', input: { key: 'fact' } }] },
      { role: 'user', content: '', tool_results: [{ tool_use_id: 'c1', content: 'I like tea' }] },
    ],
  });
  t.equal(recall.content, 'You said: I like tea');
  t.equal(
    (await llm.complete({ messages: [{ role: 'user', content: 'anything else' }] })).content,
    'Hello from the script, friend.',
  );
});

t.test('scripts load from YAML files and bad scripts are refused with the place that is wrong', async (t) => {
  const dir = tempDir();
  const file = join(dir, 'script.yaml');
  writeFileSync(file, 'responses:\n  - content: from a file\n');
  const llm = (await scriptedLlm.create('f', { file }, await ctx())) as LlmProvider;
  t.equal((await llm.complete(text)).content, 'from a file');
  await t.rejects(
    async () => scriptedLlm.create('bad', { responses: [{ turns: [] }] }, await ctx()),
    /script is invalid at \/0/,
  );
  await t.rejects(async () => scriptedLlm.create('none', {}, await ctx()), /needs option 'responses'/);
});

t.test('an abort stops a slow (chunk_delay_ms) stream mid-answer', async (t) => {
  const llm = (await scriptedLlm.create(
    'slow',
    { responses: [{ content: 'a fairly long answer that streams in pieces' }], chunk_delay_ms: 30 },
    await ctx(),
  )) as LlmProvider;
  const abort = new AbortController();
  const seen: string[] = [];
  await t.rejects(
    (async () => {
      for await (const e of llm.stream(text, { signal: abort.signal })) {
        seen.push(e.type);
        if (seen.length === 2) abort.abort();
      }
    })(),
  );
  t.equal(seen.length, 2, 'nothing arrives after the abort');
});
