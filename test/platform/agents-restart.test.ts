import t from 'tap';
import { openStore } from '../../core/store.ts';
import { startPlatformChild } from '../fixtures/platform-child.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { parseSse, readSse, STEP_LLM } from '../agents/helpers.ts';

t.test(
  'a server killed mid-run: after restart the session reads idle, its events replay, durable history is kept',
  async (t) => {
    const dataDir = tempDir('sb-agents-restart-');
    const config = {
      provider_packages: [STEP_LLM],
      providers: {
        llm: {
          default: 'steps',
          instances: {
            steps: {
              type: 'test_steps',
              options: {
                steps: [{ content: 'remembered turn' }, { content: 'x y z w v u t s', chunks: 8, delay_ms: 300 }],
              },
            },
          },
        },
        memory: { default: 'keyv', instances: { keyv: { type: 'keyv' } } },
      },
      platform: { agents: { heartbeat_ms: 100, stale_after_ms: 800, poll_ms: 20, resume_wait_ms: 200 } },
    };
    const { child, base, up } = await startPlatformChild(t, dataDir, config);
    t.ok(up, 'the server came up');
    if (!up) return;
    const json = { 'content-type': 'application/json' };
    t.equal(
      (
        await fetch(`${base}/api/v1/agents`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ name: 'a', model: 'm' }),
        })
      ).status,
      201,
    );
    const first = await fetch(`${base}/api/v1/agents/a/chat`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ message: 'keep this', session_id: 'kept' }),
    });
    t.equal((await first.json()).response, 'remembered turn');

    const abort = new AbortController();
    const res = await fetch(`${base}/api/v1/agents/a/chat/stream`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ message: 'long one', session_id: 'cut' }),
      signal: abort.signal,
    });
    await readSse(res, (ev) => ev.type === 'token', abort);
    // Wait until the token is in SQLite, not for a fixed time: a reconnect replays only
    // events the run's log has written to the store (flushed every 25 ms, later on a busy machine).
    const stored = new AbortController();
    const replayed = await readSse(
      await fetch(`${base}/api/v1/agents/a/sessions/cut/stream`, { signal: stored.signal }),
      (ev) => ev.type === 'token',
      stored,
    );
    t.equal(replayed.at(-1)?.type, 'token', 'the token is stored before the kill');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const store = await openStore({ backend: 'sqlite', dataDir });
    t.teardown(() => store.close());
    const app = await makeApp(t, config, { store, env: { DATA_DIR: dataDir } });
    const rec = (await store.collection<{ status: string; heartbeat_at: number }>('agent_runs').get('a/cut'))!;
    t.equal(rec.status, 'running', 'the killed process left its run marked running');
    // Another boot's run counts as live (it may be a replica) until its heartbeat is stale_after_ms old:
    // wait for that age, which a fast restart can reach sooner than the killed process's last beat allows.
    const staleIn = rec.heartbeat_at + config.platform.agents.stale_after_ms - Date.now();
    if (staleIn > 0) await new Promise((r) => setTimeout(r, staleIn + 50));
    const status = await app.inject({ url: '/api/v1/agents/a/sessions/cut/status' });
    t.equal(status.json().status, 'idle', 'a run whose process is gone reads idle');
    t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/agents/a/sessions/cut/run' })).statusCode, 404);
    const replay = parseSse((await app.inject({ url: '/api/v1/agents/a/sessions/cut/stream' })).body);
    t.same(
      replay.slice(0, 2).map((e) => e.type),
      ['stream_start', 'token'],
      'the events written before the kill replay from SQLite',
    );
    const kept = (await app.inject({ url: '/api/v1/agents/a/sessions/kept' })).json();
    t.same(
      kept.messages,
      [
        { role: 'user', content: 'keep this' },
        { role: 'assistant', content: 'remembered turn' },
      ],
      'history in durable memory survived the restart',
    );
  },
);

t.test('on a Redis store: a run started on one replica is followed and cancelled from another', async (t) => {
  const { agentApp, listen, until } = await import('../agents/helpers.ts');
  const store = await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' });
  t.teardown(() => store.close());
  const agent = `redis-${Date.now().toString(36)}`; // the Redis is shared: names unique to this run
  const script = [
    { turns: [{ content: 'Working. ', tool_calls: [{ name: 'think', input: {} }] }, { content: 'never' }] },
  ];
  // The second turn must still be waiting when replica A sees the cancel B asks for: the scripted wait is long and
  // ends early when the run is aborted, so a loaded machine cannot let the run finish first.
  const a = await agentApp(t, { store, script, delay_ms: 3000 });
  const b = await agentApp(t, { store, script, delay_ms: 3000 });
  t.equal(
    (
      await a.inject({
        method: 'POST',
        url: '/api/v1/agents',
        payload: { name: agent, model: 'm', hooks: { auto_memory: false } },
      })
    ).statusCode,
    201,
  );
  const base = await listen(t, a);
  const abort = new AbortController();
  const res = await fetch(`${base}/api/v1/agents/${agent}/chat/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'go', session_id: 's' }),
    signal: abort.signal,
  });
  await readSse(res, (ev) => ev.type === 'token', abort);
  t.equal((await b.inject({ url: `/api/v1/agents/${agent}/sessions/s/status` })).json().status, 'running');
  t.equal((await b.inject({ method: 'DELETE', url: `/api/v1/agents/${agent}/sessions/s/run` })).statusCode, 200);
  const evs = parseSse((await b.inject({ url: `/api/v1/agents/${agent}/sessions/s/stream` })).body);
  t.same([evs[0]!.type, evs.at(-1)!.type], ['stream_start', 'cancelled']);
  t.equal(
    await until(
      () => a.inject({ url: `/api/v1/agents/${agent}/sessions/s/status` }).then((r) => r.json().status),
      (s) => s === 'idle',
    ),
    'idle',
  );
  t.same((await b.inject({ url: `/api/v1/agents/${agent}/sessions/s` })).json().messages, [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: 'Working. ' },
  ]);
  t.equal(
    (await b.inject({ method: 'DELETE', url: `/api/v1/agents/${agent}/sessions/s` })).statusCode,
    200,
    'cleaned up: session, history and run events',
  );
  t.equal((await b.inject({ method: 'DELETE', url: `/api/v1/agents/${agent}` })).statusCode, 200);
});
