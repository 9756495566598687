import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { startOpenAiWire } from '../wire/openai-server.ts';
import { startAnthropicWire } from '../wire/anthropic-server.ts';
import { loadSettings } from '../../core/config.ts';

/**
 * OPENAI_API_KEY / OPENAI_BASE_URL and ANTHROPIC_API_KEY with no llm instances in the config switch those LLMs
 * on, as other gateways do. The providers read the variables from process.env, so the test sets them there
 * (and passes the same env to the settings) and puts them back afterwards.
 */
const VARS = ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'] as const;
const saved = Object.fromEntries(VARS.map((k) => [k, process.env[k]]));
t.teardown(() => {
  for (const k of VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});
function setEnv(values: Partial<Record<(typeof VARS)[number], string>>): NodeJS.ProcessEnv {
  for (const k of VARS) delete process.env[k];
  Object.assign(process.env, values);
  return values;
}

const complete = (provider?: string) => ({
  method: 'POST' as const,
  url: '/api/v1/llm/completions',
  headers: provider ? { 'x-provider-llm': provider } : {},
  payload: { messages: [{ role: 'user', content: 'hello' }] },
});

t.test('both keys set, no config: openai (the default) and anthropic answer from their servers', async (t) => {
  const openai = await startOpenAiWire();
  t.teardown(() => openai.stop());
  const anthropic = await startAnthropicWire();
  t.teardown(() => anthropic.stop());
  const env = setEnv({
    OPENAI_API_KEY: 'sk-env-openai',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: 'sk-ant-env',
    ANTHROPIC_BASE_URL: anthropic.url,
  });
  const app = await makeApp(t, {}, { env });

  const providers = (await app.inject({ method: 'GET', url: '/api/v1/providers' })).json();
  t.same(providers.llm, { default: 'openai', available: ['noop', 'openai', 'anthropic'] });

  const viaDefault = await app.inject(complete());
  t.equal(viaDefault.statusCode, 200, viaDefault.body);
  t.match(viaDefault.json().content, /Hello from the wire server/);
  t.equal(
    openai.requests.filter((r) => r.path.includes('/chat/completions')).length,
    1,
    'the default went to the OpenAI server',
  );
  t.equal(openai.requests[0].headers.authorization, 'Bearer sk-env-openai', 'with the key from the environment');

  const viaHeader = await app.inject(complete('anthropic'));
  t.equal(viaHeader.statusCode, 200, viaHeader.body);
  t.equal(anthropic.requests.length, 1, 'X-Provider-LLM: anthropic reached the Anthropic server');
  t.equal(anthropic.requests[0].headers['x-api-key'], 'sk-ant-env');

  const noop = await app.inject(complete('noop'));
  t.equal(noop.json().content, 'noop: hello', 'noop stays available');
  t.notMatch(JSON.stringify(providers), /sk-env-openai|sk-ant-env/, 'no key in the providers listing');
});

t.test('ANTHROPIC_API_KEY alone makes anthropic the default', async (t) => {
  const env = setEnv({ ANTHROPIC_API_KEY: 'sk-ant-only' });
  const settings = loadSettings({ env, config: {} });
  t.same(settings.config.providers?.llm, {
    instances: { noop: { type: 'noop' }, anthropic: { type: 'anthropic' } },
    default: 'anthropic',
  });
  t.notMatch(JSON.stringify(settings.config), /sk-ant-only/, 'the key is not copied into the config');
});

t.test('a config that lists llm instances, or names a default, is respected', async (t) => {
  const env = setEnv({ OPENAI_API_KEY: 'sk-env-openai' });
  const listed = loadSettings({
    env,
    config: {
      providers: { llm: { instances: { script: { type: 'scripted', options: { responses: [{ content: 'hi' }] } } } } },
    },
  });
  t.same(
    Object.keys(listed.config.providers?.llm?.instances ?? {}),
    ['script'],
    'listed instances are left as they are',
  );
  const defaulted = loadSettings({ env, config: { providers: { llm: { default: 'noop' } } } });
  t.equal(defaulted.config.providers?.llm?.default, 'noop', 'the configured default wins');
  t.same(Object.keys(defaulted.config.providers?.llm?.instances ?? {}), ['noop', 'openai']);
});

t.test('no key set: nothing changes (noop mode)', async (t) => {
  const env = setEnv({});
  t.equal(loadSettings({ env, config: {} }).config.providers, undefined);
});
