import t from 'tap';
import { parseSse } from '../agents/helpers.ts';
import { makeApp } from '../helpers/app.ts';
import { writeProviderPackage } from '../fixtures/provider-package.ts';

/** An LLM package without tool calling, for the capability refusal (noop takes tools and never calls one). */
function plainLlmPackage(): string {
  return writeProviderPackage({
    name: 'fixture-plain-llm',
    provides: ['llm'],
    source: `export const providers = [{ type: 'plain', kind: 'llm', create: (name) => ({\n  name, type: 'plain', kind: 'llm', capabilities: { streaming: false, tools: false, models: false, embeddings: false },\n  complete: async () => ({ content: 'plain', model: 'plain', stop_reason: 'end_turn', tool_calls: [], usage: { prompt_tokens: 0, completion_tokens: 0 } }),\n  stream: async function* () {}, healthcheck: async () => 'ok', close: async () => {},\n}) }];\n`,
  });
}

const SCRIPTED = {
  providers: {
    llm: {
      default: 'noop',
      instances: {
        noop: { type: 'noop' },
        scripted: {
          type: 'scripted',
          options: {
            responses: [
              {
                match: 'weather',
                turns: [
                  { tool_calls: [{ name: 'get_weather', input: { city: 'Paris' } }] },
                  { content: 'It is sunny in Paris.' },
                ],
              },
              { content: 'A scripted hello to you.' },
            ],
          },
        },
      },
    },
  },
};

t.test('completions, streamed completions and models, routed by X-Provider-LLM', async (t) => {
  const app = await makeApp(t, SCRIPTED);
  const plain = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions',
    payload: { messages: [{ role: 'user', content: 'hi' }] },
  });
  t.equal(plain.statusCode, 200);
  t.match(plain.json(), { content: 'noop: hi', stop_reason: 'end_turn', tool_calls: [], usage: { prompt_tokens: 0 } });

  const h = { 'x-provider-llm': 'scripted' };
  const tools = [
    {
      name: 'get_weather',
      description: 'Weather of a city',
      input_schema: { type: 'object', properties: { city: { type: 'string' } } },
    },
  ];
  const call = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions',
    headers: h,
    payload: { messages: [{ role: 'user', content: 'weather?' }], tools },
  });
  t.match(call.json(), { stop_reason: 'tool_use', tool_calls: [{ name: 'get_weather', input: { city: 'Paris' } }] });

  const stream = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions/stream',
    headers: h,
    payload: { messages: [{ role: 'user', content: 'weather?' }], tools },
  });
  t.equal(stream.statusCode, 200);
  t.match(stream.headers['content-type'], /text\/event-stream/);
  const events = parseSse(stream.body);
  t.same(
    [...new Set(events.map((e) => e.type))],
    ['tool_use_start', 'tool_use_delta', 'tool_use_complete', 'message_stop', 'metadata'],
  );
  t.match(
    events.find((e) => e.type === 'tool_use_complete'),
    { name: 'get_weather', input: { city: 'Paris' } },
  );

  const text = parseSse(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/llm/completions/stream',
        headers: h,
        payload: { messages: [{ role: 'user', content: 'hello' }] },
      })
    ).body,
  );
  t.equal(
    text
      .filter((e) => e.type === 'content_delta')
      .map((e) => e.delta)
      .join(''),
    'A scripted hello to you.',
  );
  t.match(text.at(-2), { type: 'message_stop', stop_reason: 'end_turn' });

  t.same((await app.inject({ method: 'GET', url: '/api/v1/llm/models', headers: h })).json(), {
    provider: 'scripted',
    models: ['scripted'],
  });
});

t.test('refusals: tools on a provider without them, unknown provider, bad body', async (t) => {
  const app = await makeApp(t, {
    ...SCRIPTED,
    provider_packages: [plainLlmPackage()],
    providers: {
      llm: { ...SCRIPTED.providers.llm, instances: { ...SCRIPTED.providers.llm.instances, plain: { type: 'plain' } } },
    },
  });
  const noTools = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions',
    headers: { 'x-provider-llm': 'plain' },
    payload: { messages: [{ role: 'user', content: 'x' }], tools: [{ name: 't', input_schema: {} }] },
  });
  t.equal(noTools.statusCode, 501);
  t.match(noTools.json(), { code: 'SB_ERR_CAPABILITY_MISSING', detail: /plain.*tool calling/ });
  const unknown = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions',
    headers: { 'x-provider-llm': 'gpt' },
    payload: { messages: [{ role: 'user', content: 'x' }] },
  });
  t.equal(unknown.statusCode, 400);
  t.equal(unknown.json().detail, "Unknown LLM provider 'gpt'. Available: noop, scripted, plain");
  const empty = await app.inject({ method: 'POST', url: '/api/v1/llm/completions', payload: { messages: [] } });
  t.equal(empty.statusCode, 422);
  const role = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions',
    payload: { messages: [{ role: 'wizard', content: 'x' }] },
  });
  t.equal(role.statusCode, 422);
});
