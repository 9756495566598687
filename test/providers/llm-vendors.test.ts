import t from 'tap';
import pino from 'pino';
import { openStore } from '../../core/store.ts';
import type { CompletionRequest, LlmProvider } from '../../core/primitives/llm.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { isSwitchboardError } from '../../core/errors.ts';
import { openaiLlm } from '../../providers/openai/index.ts';
import { anthropicLlm } from '../../providers/anthropic/index.ts';
import { llmConformance } from '../conformance/llm.ts';
import { tempDir } from '../helpers/app.ts';
import { startOpenAiWire } from '../wire/openai-server.ts';
import { startAnthropicWire } from '../wire/anthropic-server.ts';
import { DEFAULT_TEXT, type WireServer } from '../wire/common.ts';

const ctx = async (): Promise<ProviderContext> => ({
  store: await openStore({ backend: 'memory' }),
  logger: pino({ level: 'silent' }),
  dataDir: tempDir(),
  lookup: () => undefined,
});
const weather = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const text: CompletionRequest = { messages: [{ role: 'user', content: 'Say hello' }] };
const toolReq: CompletionRequest = { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weather] };
/** A whole tool round: the model's call and our result go back to the vendor. */
const roundTrip: CompletionRequest = {
  system: 'You are terse.',
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: 'Let me check.',
      tool_calls: [{ id: 'call_9', name: 'get_weather', input: { city: 'Paris' } }],
    },
    { role: 'user', content: '', tool_results: [{ tool_use_id: 'call_9', content: 'sunny, 21C' }] },
  ],
  tools: [weather],
  tool_choice: { type: 'any' },
  max_tokens: 99,
  temperature: 0.2,
};

const vendors: Array<{
  name: string;
  start: () => Promise<WireServer>;
  make: (url: string, opts?: Record<string, unknown>) => Promise<LlmProvider>;
}> = [
  {
    name: 'openai',
    start: startOpenAiWire,
    make: async (url, o = {}) =>
      openaiLlm.create(
        'openai',
        { base_url: `${url}/v1`, api_key: 'sk-test', model: 'wire-gpt', ...o },
        await ctx(),
      ) as LlmProvider,
  },
  {
    name: 'anthropic',
    start: startAnthropicWire,
    make: async (url, o = {}) =>
      anthropicLlm.create(
        'anthropic',
        { base_url: url, api_key: 'sk-ant-test', model: 'wire-claude', ...o },
        await ctx(),
      ) as LlmProvider,
  },
];

for (const v of vendors) {
  t.test(`${v.name} through its official SDK`, async (t) => {
    const wire = await v.start();
    t.teardown(() => wire.stop());

    await t.test('passes the llm conformance suite', (tt) =>
      llmConformance(tt, {
        make: () => v.make(wire.url),
        textRequest: text,
        toolRequest: toolReq,
        toolName: 'get_weather',
      }),
    );

    await t.test('tool definitions, calls and results are translated both ways', async (tt) => {
      const llm = await v.make(wire.url);
      const first = await llm.complete(toolReq);
      tt.match(first.tool_calls, [{ name: 'get_weather', input: { city: 'Paris' } }]);
      tt.equal(first.stop_reason, 'tool_use');
      const answer = await llm.complete(roundTrip);
      tt.equal(answer.content, DEFAULT_TEXT);
      const sent = wire.requests.at(-1)!.body;
      if (v.name === 'openai') {
        const msgs = sent.messages as Array<Record<string, unknown>>;
        tt.same(msgs[0], { role: 'system', content: 'You are terse.' });
        tt.match(msgs[2], {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            { id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        });
        tt.same(msgs[3], { role: 'tool', tool_call_id: 'call_9', content: 'sunny, 21C' });
        tt.match(sent.tools, [
          { type: 'function', function: { name: 'get_weather', parameters: weather.input_schema } },
        ]);
        tt.equal(sent.tool_choice, 'required');
        tt.equal(sent.max_tokens, 99);
      } else {
        tt.equal(sent.system, 'You are terse.');
        const msgs = sent.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
        tt.same(
          msgs.map((m) => m.role),
          ['user', 'assistant', 'user'],
        );
        tt.same(msgs[1].content, [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'call_9', name: 'get_weather', input: { city: 'Paris' } },
        ]);
        tt.same(msgs[2].content, [{ type: 'tool_result', tool_use_id: 'call_9', content: 'sunny, 21C' }]);
        tt.match(sent.tools, [{ name: 'get_weather', input_schema: weather.input_schema }]);
        tt.same(sent.tool_choice, { type: 'any' });
        tt.equal(sent.max_tokens, 99);
      }
    });

    await t.test('upstream errors map to statuses that name the provider', async (tt) => {
      const llm = await v.make(wire.url, { timeout_ms: 400 });
      const cases: Array<[Parameters<WireServer['enqueue']>[0], number, RegExp]> = [
        [{ kind: 'status', status: 429 }, 429, /rate limiting/],
        [{ kind: 'status', status: 500 }, 502, /failed \(500\)/],
        [{ kind: 'status', status: v.name === 'anthropic' ? 529 : 503 }, 503, /overloaded/],
        [{ kind: 'status', status: 401 }, 502, /refused the configured credentials/],
        [{ kind: 'hang' }, 504, /did not answer in time/],
      ];
      for (const [behaviour, status, detail] of cases) {
        wire.enqueue(behaviour);
        const err = await llm.complete(text).then(
          () => undefined,
          (e: unknown) => e,
        );
        tt.ok(isSwitchboardError(err), `a coded error for ${JSON.stringify(behaviour)}`);
        if (isSwitchboardError(err)) {
          tt.equal(err.statusCode, status, `${JSON.stringify(behaviour)} -> ${status}`);
          tt.match(err.detail, detail);
          tt.match(err.detail, new RegExp(`'${v.name}'`));
        }
      }
      const down = await v.make('http://127.0.0.1:9');
      await tt.rejects(down.complete(text), { statusCode: 503, code: 'SB_ERR_LLM_UNREACHABLE' });
      tt.equal(await down.healthcheck(), 'down');
      tt.equal(await llm.healthcheck(), 'ok');
    });
  });
}

t.test('openai embeddings feed semantic search', async (t) => {
  const wire = await startOpenAiWire();
  t.teardown(() => wire.stop());
  const llm = await vendors[0].make(wire.url);
  const [a, b] = await llm.embed!(['abc', 'zzz']);
  t.equal(a.length, 26);
  t.not(JSON.stringify(a), JSON.stringify(b));
});
