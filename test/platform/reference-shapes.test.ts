import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { toolChoiceObject } from '../../plugins/platform/llm/reference-shapes.ts';
import { ALICE_BOB_ROOT, apiKeyUsers, keyHeader } from '../fixtures/api-key-users.ts';

/**
 * Request shapes of the reference platform client (agentic-primitives-gateway's
 * Python client and pydantic models) that the spec leaves open: accepted here,
 * one subtest per item of issue 14. The wire-level run of the same shapes from
 * Python is test/compat/reference-clients.test.ts.
 */

t.test('policy: POST /policy/engines accepts config and keeps it', async (t) => {
  const app = await makeApp(t);
  const headers = { 'x-provider-policy': 'noop' };
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/policy/engines',
    headers,
    payload: { name: 'main', description: '', config: { mode: 'strict', max: 3 } },
  });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { engine_id: /./, name: 'main', config: { mode: 'strict', max: 3 } });
  const got = await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${created.json().engine_id}`, headers });
  t.same(got.json().config, { mode: 'strict', max: 3 });
  const bad = await app.inject({
    method: 'POST',
    url: '/api/v1/policy/engines',
    headers,
    payload: { name: 'x', config: 'strict' },
  });
  t.equal(bad.statusCode, 422, 'config must be an object');
});

t.test('memory: a fork takes branch_name; strategies take the wrapper and the short shapes', async (t) => {
  const app = await makeApp(t);
  const base = '/api/v1/memory/sessions/ann/s1';
  const ev = await app.inject({
    method: 'POST',
    url: `${base}/events`,
    payload: { messages: [{ role: 'user', text: 'one' }], metadata: {} },
  });
  t.equal(ev.statusCode, 201);
  // The reference client's fork body.
  const fork = await app.inject({
    method: 'POST',
    url: `${base}/branches`,
    payload: { root_event_id: ev.json().event_id, branch_name: 'what-if', messages: [{ role: 'user', text: 'other' }] },
  });
  t.equal(fork.statusCode, 201, fork.body);
  t.match(fork.json(), { name: 'what-if', root_event_id: ev.json().event_id });
  t.match((await app.inject({ method: 'GET', url: `${base}/branches` })).json().branches, [{ name: 'what-if' }]);
  const neither = await app.inject({
    method: 'POST',
    url: `${base}/branches`,
    payload: { root_event_id: ev.json().event_id },
  });
  t.equal(neither.statusCode, 422, 'a fork without any name is still refused');

  // The reference's resource body: strategies as free-form dicts.
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/resources',
    payload: {
      name: 'kb',
      description: '',
      strategies: [{ type: 'semantic' }, { summaryMemoryStrategy: { name: 'sums', namespaces: ['/s/{sessionId}'] } }],
    },
  });
  t.equal(res.statusCode, 201, res.body);
  t.match(res.json().strategies, [
    { type: 'semantic', name: 'semantic', namespaces: [], config: {} },
    { type: 'summary', name: 'sums', namespaces: ['/s/{sessionId}'], config: {} },
  ]);
  const id = res.json().memory_id as string;

  const wrapped = await app.inject({
    method: 'POST',
    url: `/api/v1/memory/resources/${id}/strategies`,
    payload: { strategy: { type: 'user_preference', extra: 1 } },
  });
  t.equal(wrapped.statusCode, 201, wrapped.body);
  t.match(wrapped.json(), {
    strategy_id: /./,
    type: 'user_preference',
    name: 'user_preference',
    namespaces: [],
    config: { extra: 1 },
  });
  const cloud = await app.inject({
    method: 'POST',
    url: `/api/v1/memory/resources/${id}/strategies`,
    payload: { strategy: { userPreferenceMemoryStrategy: { name: 'prefs', namespaces: ['/u'] } } },
  });
  t.match(cloud.json(), { type: 'user_preference', name: 'prefs', namespaces: ['/u'] });
  const ours = await app.inject({
    method: 'POST',
    url: `/api/v1/memory/resources/${id}/strategies`,
    payload: { name: 'n', type: 'semantic', namespaces: ['a'], config: { k: 2 } },
  });
  t.match(
    ours.json(),
    { name: 'n', type: 'semantic', namespaces: ['a'], config: { k: 2 } },
    'the documented shape is unchanged',
  );
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/memory/resources/${id}/strategies` })).json().strategies.length,
    5,
  );
  const bad = await app.inject({
    method: 'POST',
    url: `/api/v1/memory/resources/${id}/strategies`,
    payload: { strategy: { name: 'no type' } },
  });
  t.equal(bad.statusCode, 422, 'a strategy without a type is refused');
});

t.test('llm: a tool_choice string names a tool unless it is one of the named choices', async (t) => {
  t.same(toolChoiceObject('required'), { type: 'any' });
  t.same(toolChoiceObject('get_weather'), { type: 'tool', name: 'get_weather' });
  // Own keys only: `constructor` and `toString` were Object.prototype's members, not tool names.
  t.same(toolChoiceObject('constructor'), { type: 'tool', name: 'constructor' });
  t.same(toolChoiceObject('toString'), { type: 'tool', name: 'toString' });
});

t.test('llm: tool_choice strings and objects; noop with tools answers and calls none', async (t) => {
  const config = {
    providers: {
      llm: {
        default: 'noop',
        instances: {
          noop: { type: 'noop' },
          scripted: {
            type: 'scripted',
            options: {
              responses: [
                { match: 'weather', turns: [{ tool_calls: [{ name: 'get_weather', input: { city: 'Paris' } }] }] },
              ],
            },
          },
        },
      },
    },
  };
  const app = await makeApp(t, config);
  // The reference's tool shape names the schema `parameters`.
  const tools = [
    {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  ];
  for (const tool_choice of [
    'auto',
    'any',
    'none',
    'required',
    'get_weather',
    { type: 'tool', name: 'get_weather' },
    { type: 'auto' },
  ]) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/llm/completions',
      payload: {
        model: '',
        messages: [{ role: 'user', content: 'weather?' }],
        tools,
        tool_choice,
        temperature: 1.0,
        max_tokens: null,
        metadata: {},
        system: null,
      },
    });
    t.equal(res.statusCode, 200, `tool_choice ${JSON.stringify(tool_choice)}: ${res.body}`);
    t.match(
      res.json(),
      { content: 'noop: weather?', tool_calls: [], stop_reason: 'end_turn' },
      'noop answers normally and calls no tool',
    );
  }
  const streamed = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions/stream',
    payload: { messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: 'auto' },
  });
  t.equal(streamed.statusCode, 200);
  t.notMatch(streamed.body, /tool_use_start/);
  const called = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions',
    headers: { 'x-provider-llm': 'scripted' },
    payload: { messages: [{ role: 'user', content: 'weather?' }], tools, tool_choice: 'any' },
  });
  t.match(
    called.json(),
    { stop_reason: 'tool_use', tool_calls: [{ name: 'get_weather' }] },
    'a tool-calling provider still calls tools with a string tool_choice',
  );
  const bad = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions',
    payload: { messages: [{ role: 'user', content: 'x' }], tool_choice: '' },
  });
  t.equal(bad.statusCode, 422, 'an empty tool_choice is refused');
  const list = await app.inject({
    method: 'POST',
    url: '/api/v1/llm/completions',
    payload: { messages: [{ role: 'user', content: 'x' }], tool_choice: [] },
  });
  t.equal(list.statusCode, 422, 'a tool_choice that is neither a string nor an object is refused');
});

t.test(
  'observability: update a trace, generations and scores through the trace, flush (noop keeps them in memory)',
  async (t) => {
    const app = await makeApp(t);
    const headers = { 'x-provider-observability': 'noop' };
    const ingest = await app.inject({
      method: 'POST',
      url: '/api/v1/observability/traces',
      headers,
      payload: {
        trace_id: 'tr-1',
        name: 'chat',
        user_id: null,
        session_id: 's-1',
        input: 'hi',
        output: null,
        tags: ['a'],
        spans: [{ name: 'llm', level: 'DEFAULT', model: 'm', duration_ms: 3 }],
        metadata: { step: 1 },
      },
    });
    t.equal(ingest.statusCode, 202, ingest.body);

    const upd = await app.inject({
      method: 'PUT',
      url: '/api/v1/observability/traces/tr-1',
      headers,
      payload: { name: null, output: 'hello', tags: ['a', 'done'], metadata: { score: 0.9 } },
    });
    t.equal(upd.statusCode, 200, upd.body);
    t.match(upd.json(), {
      trace_id: 'tr-1',
      name: 'chat',
      output: 'hello',
      tags: ['a', 'done'],
      metadata: { step: 1, score: 0.9 },
    });
    t.match(
      (await app.inject({ method: 'GET', url: '/api/v1/observability/traces/tr-1', headers })).json(),
      { output: 'hello', metadata: { step: 1, score: 0.9 } },
      'the update is stored',
    );
    t.equal(
      (await app.inject({ method: 'PUT', url: '/api/v1/observability/traces/nope', headers, payload: { output: 'x' } }))
        .statusCode,
      404,
    );
    t.equal(
      (
        await app.inject({
          method: 'PUT',
          url: '/api/v1/observability/traces/tr-1',
          headers,
          payload: { colour: 'red' },
        })
      ).statusCode,
      422,
      'unknown fields are refused',
    );

    const gen = await app.inject({
      method: 'POST',
      url: '/api/v1/observability/traces/tr-1/generations',
      headers,
      payload: {
        name: 'completion',
        model: 'noop',
        input: [{ role: 'user', content: 'hi' }],
        output: 'noop: hi',
        usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
        metadata: {},
        level: null,
      },
    });
    t.equal(gen.statusCode, 201, gen.body);
    t.match(gen.json(), {
      generation_id: /./,
      trace_id: 'tr-1',
      name: 'completion',
      model: 'noop',
      usage: { total_tokens: 3 },
    });
    const gens = await app.inject({ method: 'GET', url: '/api/v1/observability/traces/tr-1/generations', headers });
    t.equal(gens.statusCode, 200);
    t.match(gens.json(), { total: 1, generations: [{ generation_id: gen.json().generation_id, trace_id: 'tr-1' }] });

    const score = await app.inject({
      method: 'POST',
      url: '/api/v1/observability/traces/tr-1/scores',
      headers,
      payload: { name: 'quality', value: 0.8, comment: null, data_type: 'NUMERIC' },
    });
    t.equal(score.statusCode, 201, score.body);
    t.match(score.json(), {
      score_id: /./,
      trace_id: 'tr-1',
      name: 'quality',
      value: 0.8,
      comment: null,
      data_type: 'NUMERIC',
    });
    const scores = await app.inject({ method: 'GET', url: '/api/v1/observability/traces/tr-1/scores', headers });
    t.match(scores.json(), { total: 1, scores: [{ name: 'quality', value: 0.8 }] });
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/v1/observability/traces/other/scores', headers })).statusCode,
      200,
      'an admin lists scores of any trace id',
    );
    t.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/api/v1/observability/traces/tr-1/scores',
          headers,
          payload: { value: 1 },
        })
      ).statusCode,
      422,
      'a score needs a name',
    );

    const flush = await app.inject({ method: 'POST', url: '/api/v1/observability/flush', headers });
    t.equal(flush.statusCode, 202);
    t.same(flush.json(), { status: 'accepted' });
  },
);

t.test(
  'identity: POST /identity/auth/complete is a clear 501 until a provider runs 3-legged flows; bad bodies are 422',
  async (t) => {
    const app = await makeApp(t);
    const headers = { 'x-provider-identity': 'noop' };
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/identity/auth/complete',
      headers,
      payload: { session_uri: 'urn:session:1', user_token: null, user_id: 'u1' },
    });
    t.equal(res.statusCode, 501, res.body);
    t.match(res.json(), { code: 'SB_ERR_CAPABILITY_MISSING', detail: /noop.*3-legged/ });
    const bad = await app.inject({
      method: 'POST',
      url: '/api/v1/identity/auth/complete',
      headers,
      payload: { user_id: 'u1' },
    });
    t.equal(bad.statusCode, 422, 'session_uri is required');
  },
);

t.test(
  "agent and team specs accept the reference models' extra fields (checkpointing_enabled, max_concurrent, primitive options)",
  async (t) => {
    const app = await makeApp(t);
    // The reference client's create body, unset optionals as null.
    const agent = await app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      payload: {
        name: 'ref-agent',
        description: '',
        model: 'noop',
        system_prompt: 'You are a helpful assistant.',
        primitives: { memory: { enabled: true, tools: null, namespace: null, shared_namespaces: null, options: {} } },
        hooks: { auto_memory: true, auto_trace: true },
        provider_overrides: {},
        max_turns: 20,
        temperature: 1.0,
        max_tokens: null,
        shared_with: [],
        checkpointing_enabled: true,
      },
    });
    t.equal(agent.statusCode, 201, agent.body);
    t.match(agent.json(), {
      name: 'ref-agent',
      checkpointing_enabled: true,
      primitives: { memory: { enabled: true } },
    });
    const upd = await app.inject({
      method: 'PUT',
      url: '/api/v1/agents/ref-agent',
      payload: { checkpointing_enabled: false, description: null },
    });
    t.equal(upd.statusCode, 200, upd.body);
    t.equal(upd.json().checkpointing_enabled, false);
    for (const name of ['planner', 'synth', 'w1', 'w2'])
      await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name, model: 'noop' } });
    const team = await app.inject({
      method: 'POST',
      url: '/api/v1/teams',
      payload: {
        name: 'ref-team',
        description: '',
        planner: 'planner',
        synthesizer: 'synth',
        workers: ['w1', 'w2'],
        max_concurrent: 1,
        global_max_turns: 100,
        global_timeout_seconds: 300,
        shared_memory_namespace: null,
        shared_with: [],
        checkpointing_enabled: true,
      },
    });
    t.equal(team.statusCode, 201, team.body);
    t.match(team.json(), { name: 'ref-team', max_concurrent: 1, checkpointing_enabled: true });
    const tupd = await app.inject({
      method: 'PUT',
      url: '/api/v1/teams/ref-team',
      payload: { max_concurrent: null, checkpointing_enabled: false },
    });
    t.equal(tupd.statusCode, 200, tupd.body);
    t.match(
      tupd.json(),
      { max_concurrent: null, checkpointing_enabled: false },
      'max_concurrent is nullable: an explicit null clears it',
    );
  },
);

t.test('observability: changing a trace and reading its records is for its user or an admin', async (t) => {
  const app = await makeApp(t, apiKeyUsers(ALICE_BOB_ROOT));
  const as = (who: string) => ({ ...keyHeader(who), 'x-provider-observability': 'noop' });
  await app.inject({
    method: 'POST',
    url: '/api/v1/observability/traces',
    headers: as('alice'),
    payload: { trace_id: 'al-1', name: 'chat', user_id: 'alice' },
  });
  t.equal(
    (
      await app.inject({
        method: 'PUT',
        url: '/api/v1/observability/traces/al-1',
        headers: as('alice'),
        payload: { output: 'mine' },
      })
    ).statusCode,
    200,
  );
  const moved = await app.inject({
    method: 'PUT',
    url: '/api/v1/observability/traces/al-1',
    headers: as('alice'),
    payload: { user_id: 'bob' },
  });
  t.equal(moved.statusCode, 403, 'a user cannot hand a trace to someone else');
  const bob = await app.inject({
    method: 'PUT',
    url: '/api/v1/observability/traces/al-1',
    headers: as('bob'),
    payload: { output: 'hijacked' },
  });
  t.equal(bob.statusCode, 403);
  t.equal(bob.json().code, 'SB_ERR_OBSERVABILITY_FORBIDDEN');
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/observability/traces/al-1/scores', headers: as('bob') }))
      .statusCode,
    403,
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/observability/traces/al-1/generations', headers: as('bob') }))
      .statusCode,
    403,
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/observability/traces/al-1/scores', headers: as('alice') }))
      .statusCode,
    200,
  );
  const root = await app.inject({
    method: 'PUT',
    url: '/api/v1/observability/traces/al-1',
    headers: as('root'),
    payload: { user_id: 'bob' },
  });
  t.equal(root.statusCode, 200, 'an admin may');
  t.match(
    (await app.inject({ method: 'GET', url: '/api/v1/observability/traces/al-1', headers: as('root') })).json(),
    { output: 'mine', user_id: 'bob' },
    'bob changed nothing; the admin moved it',
  );
});
