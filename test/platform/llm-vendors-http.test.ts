import t from 'tap';
import { parseSse } from '../agents/helpers.ts';
import { makeApp } from '../helpers/app.ts';
import { startOpenAiWire } from '../wire/openai-server.ts';
import { startAnthropicWire } from '../wire/anthropic-server.ts';

t.test('the gateway routes completions to openai and anthropic, streaming and tools included', async (t) => {
  const oa = await startOpenAiWire();
  const an = await startAnthropicWire();
  t.teardown(() => Promise.all([oa.stop(), an.stop()]));
  const app = await makeApp(t, {
    providers: {
      llm: {
        default: 'openai',
        instances: {
          openai: {
            type: 'openai',
            options: { base_url: `${oa.url}/v1`, api_key: 'sk-secret-openai', model: 'wire-gpt' },
          },
          anthropic: {
            type: 'anthropic',
            options: { base_url: an.url, api_key: 'sk-secret-anthropic', model: 'wire-claude' },
          },
        },
      },
      memory: { default: 'semantic', instances: { semantic: { type: 'keyv', options: { embeddings: 'openai' } } } },
    },
  });
  const tools = [
    {
      name: 'lookup',
      description: 'Look something up',
      input_schema: { type: 'object', properties: { city: { type: 'string' } } },
    },
  ];

  const plain = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions',
    payload: { messages: [{ role: 'user', content: 'hi' }] },
  });
  t.match(plain.json(), {
    model: 'wire-gpt',
    stop_reason: 'end_turn',
    usage: { prompt_tokens: 11, completion_tokens: 7 },
  });

  const streamed = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions/stream',
    headers: { 'x-provider-llm': 'anthropic' },
    payload: { messages: [{ role: 'user', content: 'where?' }], tools },
  });
  const ev = parseSse(streamed.body);
  t.same(
    [...new Set(ev.map((e) => e.type))],
    ['tool_use_start', 'tool_use_delta', 'tool_use_complete', 'message_stop', 'metadata'],
  );
  t.match(
    ev.find((e) => e.type === 'tool_use_complete'),
    { name: 'lookup', input: { city: 'Paris' } },
  );
  t.match(ev.at(-1), { type: 'metadata', usage: { input_tokens: 13, output_tokens: 9 } });
  t.equal(an.requests.at(-1)!.headers['x-api-key'], 'sk-secret-anthropic', 'the configured key reaches the vendor');

  oa.enqueue({ kind: 'status', status: 429 });
  const limited = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions/stream',
    payload: { messages: [{ role: 'user', content: 'x' }] },
  });
  t.equal(limited.statusCode, 429, 'an upstream failure before the first event is a plain JSON error');
  t.match(limited.json(), { code: 'SB_ERR_LLM_RATE_LIMITED', detail: /'openai'/ });

  t.same(
    (await app.inject({ method: 'GET', url: '/api/v1/llm/models', headers: { 'x-provider-llm': 'anthropic' } })).json(),
    { provider: 'anthropic', models: ['wire-claude'] },
  );
  const status = await app.inject({ method: 'GET', url: '/api/v1/providers/status' });
  t.equal(status.json().checks['llm/openai'], 'ok');
  t.notOk(JSON.stringify(status.json()).includes('sk-secret'), 'keys never appear in responses');

  // Memory ranks with the openai embeddings fused with BM25.
  await app.inject({
    method: 'POST',
    url: '/api/v1/memory/kb',
    payload: { key: 'tea', content: 'green tea and oolong' },
  });
  await app.inject({
    method: 'POST',
    url: '/api/v1/memory/kb',
    payload: { key: 'code', content: 'typescript compiler flags' },
  });
  const hits = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/kb/search',
    payload: { query: 'oolong tea', top_k: 2 },
  });
  t.equal(hits.json().results[0].record.key, 'tea');
  t.ok(
    oa.requests.some((r) => r.path.endsWith('/embeddings')),
    'embeddings were requested',
  );
});
