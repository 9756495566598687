import t from 'tap';
import { apiKeyUsers, keyHeader } from '../fixtures/api-key-users.ts';
import { agentApp, listen, llmRequests, parseSse, readSse } from '../agents/helpers.ts';

const call = (id: string, name: string, input: Record<string, unknown>) => ({ id, name, input });

t.test('chat: response has every field of spec 2.2; history continues in the session', async (t) => {
  const app = await agentApp(t, { steps: [{ content: 'first answer' }, { content: 'second answer' }] });
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/agents',
        payload: { name: 'a', model: 'm', system_prompt: 'Be brief.' },
      })
    ).statusCode,
    201,
  );
  const r1 = await app.inject({ method: 'POST', url: '/api/v1/agents/a/chat', payload: { message: 'hello' } });
  t.equal(r1.statusCode, 200, r1.body);
  const b1 = r1.json();
  t.same(Object.keys(b1).sort(), [
    'agent_name',
    'artifacts',
    'metadata',
    'response',
    'session_id',
    'tools_called',
    'turns_used',
  ]);
  t.equal(b1.response, 'first answer');
  t.equal(b1.agent_name, 'a');
  t.equal(b1.turns_used, 1);
  t.same(b1.tools_called, []);
  t.same(b1.artifacts, []);
  const obs = app.sb.providers.get('observability') as unknown as {
    getTrace(id: string): Promise<{ name: string; session_id: string; output: string } | undefined>;
  };
  const trace = await obs.getTrace(b1.metadata.trace_id);
  t.match(
    trace,
    { name: 'agent:a', session_id: b1.session_id, output: 'first answer' },
    'auto_trace stored the trace it reports',
  );
  t.ok(b1.session_id);

  const r2 = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/a/chat',
    payload: { message: 'again', session_id: b1.session_id },
  });
  t.equal(r2.json().response, 'second answer');
  const sent = llmRequests(app)[1]!;
  t.same(
    sent.messages.map((m) => [m.role, m.content]),
    [
      ['user', 'hello'],
      ['assistant', 'first answer'],
      ['user', 'again'],
    ],
    'the second turn carries the first as history',
  );
  t.equal((llmRequests(app)[0] as { system?: string }).system, 'Be brief.');
  const hist = await app.inject({ url: `/api/v1/agents/a/sessions/${b1.session_id}` });
  t.same(hist.json(), {
    agent_name: 'a',
    session_id: b1.session_id,
    messages: [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: 'second answer' },
    ],
  });
});

t.test('auto_trace off, or no observability provider: no trace id', async (t) => {
  const app = await agentApp(t, { config: { providers: { observability: { instances: {} } } } });
  await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'a', model: 'm' } });
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: { name: 'b', model: 'm', hooks: { auto_trace: false } },
  });
  const a = await app.inject({ method: 'POST', url: '/api/v1/agents/a/chat', payload: { message: 'hi' } });
  t.equal(a.statusCode, 200, a.body);
  t.notOk('trace_id' in a.json().metadata, 'no observability provider: nothing reported');
  const b = await app.inject({ method: 'POST', url: '/api/v1/agents/b/chat', payload: { message: 'hi' } });
  t.notOk('trace_id' in b.json().metadata, 'auto_trace off');
});

t.test('tool calls of one turn run in parallel; tool errors go back as text', async (t) => {
  const app = await agentApp(t, {
    steps: [
      { tool_calls: [call('c1', 'no_such_tool', {}), call('c2', 'call_missing', { message: 'x' })] },
      { content: 'recovered' },
    ],
  });
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: { name: 'a', model: 'm', primitives: { agents: { enabled: true, tools: ['missing'] } } },
  });
  const r = await app.inject({ method: 'POST', url: '/api/v1/agents/a/chat', payload: { message: 'go' } });
  t.equal(r.statusCode, 200, r.body);
  t.equal(r.json().response, 'recovered');
  t.equal(r.json().turns_used, 2);
  t.same(r.json().tools_called, ['no_such_tool', 'call_missing']);
  const results = (
    llmRequests(app)[1]!.messages.at(-1) as { tool_results: Array<{ tool_use_id: string; content: string }> }
  ).tool_results;
  t.same(
    results.map((x) => x.tool_use_id),
    ['c1', 'c2'],
    'one result per call, in call order',
  );
  t.match(results[0]!.content, /^Error: unknown tool 'no_such_tool'/);
  t.match(results[1]!.content, /^Error: agent 'missing' does not exist/);
});

t.test('max_turns ends the loop with a clear message', async (t) => {
  const app = await agentApp(t, { steps: [{ content: 'thinking', tool_calls: [call('c', 'nothing', {})] }] });
  await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'a', model: 'm', max_turns: 3 } });
  const r = await app.inject({ method: 'POST', url: '/api/v1/agents/a/chat', payload: { message: 'loop' } });
  t.equal(r.statusCode, 200);
  t.equal(r.json().turns_used, 3);
  t.match(r.json().response, /max_turns limit \(3\)/);
  t.equal(r.json().metadata.max_turns_reached, true);
  t.equal(llmRequests(app).length, 3);
});

t.test('chat/stream emits the chat events and the run is replayable', async (t) => {
  const app = await agentApp(t, { store: 'sqlite', steps: [{ content: 'streamed answer', chunks: 3 }] });
  await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'a', model: 'm' } });
  const r = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/a/chat/stream',
    payload: { message: 'hi', session_id: 's1' },
  });
  t.equal(r.statusCode, 200);
  t.match(r.headers['content-type'], /^text\/event-stream/);
  const evs = parseSse(r.body);
  t.same(
    evs.map((e) => e.type),
    ['stream_start', 'token', 'token', 'token', 'done'],
  );
  t.equal(evs[0]!.session_id, 's1');
  t.equal(
    evs
      .filter((e) => e.type === 'token')
      .map((e) => e.content)
      .join(''),
    'streamed answer',
  );
  const done = evs.at(-1)!;
  t.equal(done.response, 'streamed answer');
  t.equal(done.agent_name, 'a');
  t.same(Object.keys(done).sort(), [
    'agent_name',
    'artifacts',
    'metadata',
    'response',
    'session_id',
    'tools_called',
    'turns_used',
    'type',
  ]);

  t.equal((await app.inject({ url: '/api/v1/agents/a/sessions/s1/status' })).json().status, 'idle');
  const replay = await app.inject({ url: '/api/v1/agents/a/sessions/s1/stream' });
  t.same(parseSse(replay.body), evs, 'the reconnect endpoint replays the stored events');
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/api/v1/agents/a/sessions/s1/run' })).statusCode,
    404,
    'no active run to cancel',
  );
});

t.test('a status left running by a process that is gone reads idle', async (t) => {
  const app = await agentApp(t);
  await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'a', model: 'm' } });
  await app.sb.store.collection('agent_runs').set('a/old', {
    run_id: 'r-old',
    agent_name: 'a',
    session_id: 'old',
    actor_id: 'noop',
    status: 'running',
    boot_id: 'a-previous-boot',
    heartbeat_at: Date.now() - 60_000,
    started_at: new Date().toISOString(),
    event_count: 0,
  });
  t.equal((await app.inject({ url: '/api/v1/agents/a/sessions/old/status' })).json().status, 'idle');
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/agents/a/sessions/old/run' })).statusCode, 404);
  await app.sb.store.collection('agent_runs').set('a/other', {
    run_id: 'r-live',
    agent_name: 'a',
    session_id: 'other',
    actor_id: 'noop',
    status: 'running',
    boot_id: 'another-replica',
    heartbeat_at: Date.now(),
    started_at: new Date().toISOString(),
    event_count: 0,
  });
  t.equal(
    (await app.inject({ url: '/api/v1/agents/a/sessions/other/status' })).json().status,
    'running',
    'a fresh heartbeat from another replica is running',
  );
});

t.test('sessions: list, delete, cleanup keeps the most recent', async (t) => {
  const app = await agentApp(t);
  await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'a', model: 'm' } });
  for (const s of ['s1', 's2', 's3', 's4'])
    await app.inject({ method: 'POST', url: '/api/v1/agents/a/chat', payload: { message: `hi ${s}`, session_id: s } });
  const list = (await app.inject({ url: '/api/v1/agents/a/sessions' })).json();
  t.same(
    list.sessions.map((s: { session_id: string }) => s.session_id),
    ['s4', 's3', 's2', 's1'],
  );
  t.equal(list.sessions[0].message_count, 2);
  t.equal(list.sessions[0].status, 'idle');
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/agents/a/sessions/s2' })).statusCode, 200);
  t.equal((await app.inject({ url: '/api/v1/agents/a/sessions/s2' })).statusCode, 404);
  const cleaned = (await app.inject({ method: 'POST', url: '/api/v1/agents/a/sessions/cleanup?keep=1' })).json();
  t.same(cleaned.deleted, ['s3', 's1']);
  t.same(cleaned.kept, ['s4']);
  t.same(
    (await app.inject({ url: '/api/v1/agents/a/sessions' }))
      .json()
      .sessions.map((s: { session_id: string }) => s.session_id),
    ['s4'],
  );
});

t.test('tool catalog has every key of spec 4.1; agents list their tools', async (t) => {
  const app = await agentApp(t);
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: { name: 'helper', model: 'm', description: 'Helps' },
  });
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: { name: 'boss', model: 'm', primitives: { agents: { enabled: true, tools: ['helper'] } } },
  });
  const cat = (await app.inject({ url: '/api/v1/agents/tool-catalog' })).json().primitives;
  t.same(Object.keys(cat), [
    'memory',
    'code_interpreter',
    'browser',
    'tools',
    'identity',
    'shared_memory',
    'task_board',
    'agent_management',
    'agents',
  ]);
  t.same(
    cat.memory.map((x: { name: string }) => x.name),
    ['remember', 'recall', 'search_memory', 'forget', 'list_memories'],
  );
  t.same(
    cat.shared_memory.map((x: { name: string }) => x.name),
    ['share_finding', 'read_shared', 'search_shared', 'list_shared'],
  );
  t.same(
    cat.code_interpreter.map((x: { name: string }) => x.name),
    ['execute_code', 'upload_file', 'read_file'],
  );
  t.same(
    cat.browser.map((x: { name: string }) => x.name),
    ['navigate', 'read_page', 'click', 'type_text', 'screenshot', 'evaluate_js'],
  );
  t.same(
    cat.tools.map((x: { name: string }) => x.name),
    ['search_tools', 'invoke_tool'],
  );
  t.same(
    cat.agent_management.map((x: { name: string }) => x.name),
    ['create_agent', 'list_agents', 'list_primitives', 'delete_agent', 'delegate_to'],
  );
  t.same([cat.identity, cat.task_board], [[], []], 'no tools listed that cannot run yet');
  t.same(
    cat.agents.map((x: { name: string }) => x.name),
    ['call_boss', 'call_helper'],
  );
  const tools = (await app.inject({ url: '/api/v1/agents/boss/tools' })).json();
  t.same(tools, {
    agent_name: 'boss',
    tools: [
      {
        name: 'call_helper',
        description: "Delegate to agent 'helper': Helps. Returns its answer.",
        primitive: 'agents',
        provider: 'switchboard',
      },
    ],
  });
});

t.test('provider_overrides route the agent; a locked primitive refuses them', async (t) => {
  const twoLlms = {
    llm: {
      default: 'steps',
      instances: {
        steps: { type: 'test_steps', options: { steps: [{ content: 'from steps' }] } },
        other: { type: 'test_steps', options: { steps: [{ content: 'from other' }] } },
      },
    },
  };
  const app = await agentApp(t, { config: { providers: twoLlms } });
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/agents',
        payload: { name: 'a', model: 'm', provider_overrides: { llm: 'other' } },
      })
    ).statusCode,
    201,
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/agents/a/chat', payload: { message: 'hi' } })).json().response,
    'from other',
  );
  const byHeader = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/a/chat',
    headers: { 'x-provider-llm': 'steps' },
    payload: { message: 'hi' },
  });
  t.equal(byHeader.json().response, 'from steps', 'a header beats the agent override');

  const locked = await agentApp(t, { config: { providers: { llm: { ...twoLlms.llm, locked: true } } } });
  const refused = await locked.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: { name: 'a', model: 'm', provider_overrides: { llm: 'other' } },
  });
  t.equal(refused.statusCode, 403, refused.body);
  t.equal(refused.json().code, 'SB_ERR_PROVIDER_LOCKED');
  t.equal(
    (
      await locked.inject({
        method: 'POST',
        url: '/api/v1/agents',
        payload: { name: 'b', model: 'm', provider_overrides: { llm: 'steps' } },
      })
    ).statusCode,
    201,
    'naming the default is fine',
  );
});

t.test('two replicas sharing one store: status, reconnect and cancel work from the other one', async (t) => {
  const { openStore } = await import('../../core/store.ts');
  const { tempDir } = await import('../helpers/app.ts');
  const store = await openStore({ backend: 'sqlite', dataDir: tempDir('sb-replicas-') });
  t.teardown(() => store.close());
  const steps = [{ content: 'a b c d e f g h i j', chunks: 10, delay_ms: 60 }];
  const a = await agentApp(t, { store, steps });
  const b = await agentApp(t, { store, steps });
  t.equal(
    (await a.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'x', model: 'm' } })).statusCode,
    201,
  );
  const base = await listen(t, a);
  const abort = new AbortController();
  const res = await fetch(`${base}/api/v1/agents/x/chat/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'go', session_id: 'r1' }),
    signal: abort.signal,
  });
  await readSse(res, (ev) => ev.type === 'token', abort);
  t.equal(
    (await b.inject({ url: '/api/v1/agents/x/sessions/r1/status' })).json().status,
    'running',
    'replica B sees the run of replica A',
  );
  const cancel = await b.inject({ method: 'DELETE', url: '/api/v1/agents/x/sessions/r1/run' });
  t.equal(cancel.statusCode, 200, cancel.body);
  const replay = parseSse((await b.inject({ url: '/api/v1/agents/x/sessions/r1/stream' })).body);
  t.equal(replay[0]!.type, 'stream_start');
  t.equal(replay.at(-1)!.type, 'cancelled', 'replica A stopped the run when B asked');
  t.equal((await a.inject({ url: '/api/v1/agents/x/sessions/r1/status' })).json().status, 'idle');
});

t.test(
  'code interpreter, browser and tools registry as agent tools: offered only when the provider can run them',
  async (t) => {
    const { fileURLToPath } = await import('node:url');
    const echoCi = fileURLToPath(new URL('../agents/fixtures/echo-ci', import.meta.url));
    const app = await agentApp(t, {
      config: {
        provider_packages: [echoCi],
        providers: {
          code_interpreter: { default: 'echo', instances: { echo: { type: 'test_echo' } } },
          // The noop tool registry (with the registry surface running, 'registry' would be the default).
          tools: { default: 'noop' },
        },
      },
      steps: [
        {
          tool_calls: [
            call('x1', 'execute_code', { code: 'print(1)', language: 'echo' }),
            call('x2', 'search_tools', { query: 'weather' }),
          ],
        },
        { tool_calls: [call('x3', 'execute_code', { code: 'second' })] },
        { content: 'done' },
      ],
    });
    await app.inject({
      method: 'POST',
      url: '/api/v1/tools',
      payload: {
        name: 'get_weather',
        description: 'Weather for a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      },
    });
    await app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      payload: {
        name: 'a',
        model: 'm',
        primitives: { code_interpreter: { enabled: true }, browser: { enabled: true }, tools: { enabled: true } },
      },
    });
    const listed = (await app.inject({ url: '/api/v1/agents/a/tools' })).json().tools;
    const byName = Object.fromEntries(
      listed.map((x: { name: string; primitive: string; provider: string }) => [
        x.name,
        `${x.primitive}/${x.provider}`,
      ]),
    );
    t.equal(byName.execute_code, 'code_interpreter/echo');
    t.equal(byName.search_tools, 'tools/noop');
    t.notOk(byName.navigate, 'the noop browser cannot navigate, so navigate is not offered');
    t.notOk(byName.invoke_tool, 'the noop registry cannot invoke, so invoke_tool is not offered');

    const ci = app.sb.providers.get('code_interpreter', 'echo') as unknown as { log: string[] };
    t.same(ci.log, [], 'listing tools opens no session');
    const r = await app.inject({ method: 'POST', url: '/api/v1/agents/a/chat', payload: { message: 'run' } });
    t.equal(r.json().response, 'done');
    const first = (llmRequests(app)[1]!.messages.at(-1) as { tool_results: Array<{ content: string }> }).tool_results;
    t.match(JSON.parse(first[0]!.content), { stdout: 'print(1)', exit_code: 0 });
    t.match(JSON.parse(first[1]!.content), [{ name: 'get_weather' }], 'search_tools found the registered tool');
    t.same(
      ci.log,
      ['open ci-1', 'exec ci-1', 'exec ci-1', 'close ci-1'],
      'one session, opened on first use, reused, closed at the end of the run',
    );
  },
);

t.test('agent_management: an agent creates another and delegates to it', async (t) => {
  const app = await agentApp(t, {
    steps: [
      {
        tool_calls: [
          call('m1', 'create_agent', { name: 'worker', system_prompt: 'Work hard.', description: 'Does work' }),
        ],
      },
      {
        tool_calls: [
          call('m2', 'delegate_to', { agent: 'worker', message: 'do it' }),
          call('m3', 'delete_agent', { name: 'manager' }),
        ],
      },
      { content: 'worked' },
      { content: 'managed' },
    ],
  });
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: { name: 'manager', model: 'mx', primitives: { agent_management: { enabled: true } } },
  });
  const r = await app.inject({ method: 'POST', url: '/api/v1/agents/manager/chat', payload: { message: 'organise' } });
  t.equal(r.json().response, 'managed');
  const worker = (await app.inject({ url: '/api/v1/agents/worker' })).json();
  t.match(worker, { name: 'worker', model: 'mx', system_prompt: 'Work hard.', owner_id: 'noop' });
  t.equal((llmRequests(app)[2] as { system?: string }).system, 'Work hard.', 'the delegated turn ran as the new agent');
  const results = (
    llmRequests(app)[3]!.messages.at(-1) as { tool_results: Array<{ content: string }> }
  ).tool_results.map((x) => x.content);
  t.same(results, ['worked', 'Error: an agent cannot delete itself']);
});

t.test('one run per session at a time: a second stream on a busy session is 409', async (t) => {
  const { until } = await import('../agents/helpers.ts');
  const app = await agentApp(t, { steps: [{ content: 'slow reply here', chunks: 3, delay_ms: 80 }] });
  await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'a', model: 'm' } });
  const first = app.inject({
    method: 'POST',
    url: '/api/v1/agents/a/chat/stream',
    payload: { message: 'one', session_id: 'busy' },
  });
  await until(
    () =>
      app.inject({ url: '/api/v1/agents/a/sessions/busy/status' }).then((r) => r.statusCode === 200 && r.json().status),
    (s) => s === 'running',
  );
  const second = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/a/chat/stream',
    payload: { message: 'two', session_id: 'busy' },
  });
  t.equal(second.statusCode, 409, second.body);
  t.equal(second.json().code, 'SB_ERR_AGENT_RUN_ACTIVE');
  const plain = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/a/chat',
    payload: { message: 'three', session_id: 'busy' },
  });
  t.equal(plain.statusCode, 409, 'a plain chat on the busy session waits its turn too');
  t.equal(parseSse((await first).body).at(-1)!.type, 'done');
});

t.test('reconnect to a run left behind by a dead process waits for the resumed run and follows it', async (t) => {
  const app = await agentApp(t, { steps: [{ content: 'fresh answer', chunks: 2 }] });
  await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'a', model: 'm' } });
  t.equal(
    (await app.inject({ url: '/api/v1/agents/a/sessions/none/stream' })).statusCode,
    404,
    'nothing to reconnect to',
  );
  await app.sb.store
    .collection('agent_run_events')
    .set('r-dead/00000000', { type: 'stream_start', session_id: 'z', run_id: 'r-dead' });
  await app.sb.store.collection('agent_run_events').set('r-dead/00000001', { type: 'token', content: 'half' });
  await app.sb.store.collection('agent_runs').set('a/z', {
    run_id: 'r-dead',
    agent_name: 'a',
    session_id: 'z',
    actor_id: 'noop',
    status: 'running',
    boot_id: 'crashed-process',
    heartbeat_at: Date.now() - 60_000,
    started_at: new Date().toISOString(),
    event_count: 2,
  });
  // The new run starts once the reconnect has replayed the dead run (not after a fixed pause,
  // which a busy machine can outlast), while the reconnect waits for a resumed run.
  const base = await listen(t, app);
  const abort = new AbortController();
  let resumed: Promise<{ statusCode: number }> | undefined;
  const res = await fetch(`${base}/api/v1/agents/a/sessions/z/stream`, { signal: abort.signal });
  const evs = await readSse(
    res,
    (ev) => {
      if (ev.type === 'token' && ev.content === 'half' && !resumed) {
        resumed = app.inject({
          method: 'POST',
          url: '/api/v1/agents/a/chat/stream',
          payload: { message: 'again', session_id: 'z' },
        });
      }
      return ev.type === 'done';
    },
    abort,
  );
  t.ok(resumed, 'the dead run was replayed before the new one started');
  t.equal((await resumed!).statusCode, 200, 'a stale run does not block a new one');
  t.same(
    evs.slice(0, 3).map((e) => e.type),
    ['stream_start', 'token', 'run_resumed'],
  );
  t.equal(evs[1]!.content, 'half', 'the dead run is replayed first');
  t.equal(evs[2]!.run_id, evs[3]!.run_id, 'then the resumed run is followed');
  t.match(evs.at(-1), { type: 'done', response: 'fresh answer' });
});

t.test('user:<id> memory namespaces stay private to their user, also through a shared agent', async (t) => {
  const app = await agentApp(t, {
    memory: 'in_memory',
    config: apiKeyUsers({ alice: {}, bob: {} }),
    steps: [{ tool_calls: [call('r', 'remember', { key: 'k', content: 'v' })] }, { content: 'ok' }],
  });
  const alice = keyHeader('alice');
  const bob = keyHeader('bob');
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: alice,
    payload: {
      name: 'diary',
      model: 'm',
      shared_with: ['*'],
      primitives: { memory: { enabled: true, namespace: 'user:alice' } },
    },
  });
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: alice,
    payload: {
      name: 'mine',
      model: 'm',
      shared_with: ['*'],
      primitives: { memory: { enabled: true, namespace: 'user:{user_id}' } },
    },
  });
  await app.inject({ method: 'POST', url: '/api/v1/agents/diary/chat', headers: bob, payload: { message: 'write' } });
  const denied = (llmRequests(app)[1]!.messages.at(-1) as { tool_results: Array<{ content: string }> }).tool_results[0]!
    .content;
  t.equal(denied, "Error: namespace 'user:alice' belongs to user 'alice'");
  t.same(
    (await app.inject({ url: '/api/v1/agents/diary/memory', headers: bob })).json().stores,
    [],
    "bob's view does not show alice's namespace",
  );
  await app.inject({ method: 'POST', url: '/api/v1/agents/mine/chat', headers: bob, payload: { message: 'write' } });
  t.equal(
    (llmRequests(app)[3]!.messages.at(-1) as { tool_results: Array<{ content: string }> }).tool_results[0]!.content,
    "Remembered 'k'.",
  );
  const mem = app.sb.providers.get('memory') as unknown as {
    retrieve(ns: string, k: string): Promise<{ content: string } | undefined>;
  };
  t.equal((await mem.retrieve('user:bob', 'k'))?.content, 'v', '{user_id} expands to the caller');
  t.equal(await mem.retrieve('user:alice', 'k'), undefined);
});

t.test('an LLM failure is a 502 naming the provider, and an `error` event on a stream', async (t) => {
  const app = await agentApp(t, { script: [{ match: 'known', content: 'fine' }] });
  await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'a', model: 'm' } });
  const r = await app.inject({ method: 'POST', url: '/api/v1/agents/a/chat', payload: { message: 'unscripted' } });
  t.equal(r.statusCode, 502, r.body);
  t.match(r.json(), { code: 'SB_ERR_AGENT_LLM_FAILED', detail: /^The LLM provider 'scripted' failed: / });
  const s = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/a/chat/stream',
    payload: { message: 'unscripted', session_id: 'e' },
  });
  const evs = parseSse(s.body);
  t.match(evs.at(-1), { type: 'error', detail: /^The LLM provider 'scripted' failed/ });
  t.equal((await app.inject({ url: '/api/v1/agents/a/sessions/e/status' })).json().status, 'idle');
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/agents/a/sessions/e' })).statusCode, 200);
  let left = 0;
  for await (const _ of app.sb.store.collection('agent_run_events').entries()) left++;
  t.equal(left, 0, 'deleting the session deletes its run events');
});

t.test('delegation is limited to depth 3', async (t) => {
  const chain = ['a', 'b', 'c', 'd', 'e'];
  const app = await agentApp(t, {
    script: chain
      .slice(0, 4)
      .map((_, i) => ({
        match: `^level${i}$`,
        turns: [
          { tool_calls: [{ name: `call_${chain[i + 1]}`, input: { message: `level${i + 1}` } }] },
          { content: '{{tool_result}}' },
        ],
      }))
      .concat([{ match: '^level4$', turns: [{ content: 'bottom reached' }] }]),
  });
  for (const [i, name] of chain.entries()) {
    const agents = i < 4 ? { agents: { enabled: true, tools: [chain[i + 1]!] } } : {};
    t.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/api/v1/agents',
          payload: { name, model: 'm', hooks: { auto_memory: false }, primitives: agents },
        })
      ).statusCode,
      201,
    );
  }
  const evs = parseSse(
    (await app.inject({ method: 'POST', url: '/api/v1/agents/a/chat/stream', payload: { message: 'level0' } })).body,
  );
  const done = evs.at(-1)!;
  t.equal(done.type, 'done');
  t.match(
    done.response,
    /^Error: delegation depth limit \(3\) reached; answer without calling 'e'/,
    'd (depth 3) may not call e',
  );
  t.same(
    [...new Set(evs.filter((e) => e.type === 'sub_agent_tool').map((e) => `${e.agent}:${e.name}`))],
    ['b:call_c', 'c:call_d', 'd:call_e'],
    'nested sub-agent tool calls surface in the top stream',
  );
});
