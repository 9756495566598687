import t from 'tap';
import { type Ev, parseSse, readSse, STEP_LLM } from '../agents/helpers.ts';
import { startCluster } from './cluster.ts';

/**
 * An agent's streaming run through nginx whose replica is killed (SIGKILL)
 * mid-stream. Through the balancer (which then has only the other replica):
 * the run reads idle once its heartbeat is stale, and the session's stream
 * replays every event the client had seen before the kill, in order. Which
 * replica ran the stream is read from X-Request-Id, whose prefix is per process.
 */

t.setTimeout(900_000);

const json = { 'content-type': 'application/json' };
const prefixOf = (res: Response) => (res.headers.get('x-request-id') ?? '').split('-')[0];
const strip = (evs: Ev[]) => evs.map((e) => JSON.stringify(e));

t.test('a replica killed mid-run: the run reads idle through nginx and its events replay in full', async (t) => {
  const c = await startCluster(t, {
    config: {
      provider_packages: [STEP_LLM],
      providers: {
        llm: {
          default: 'steps',
          instances: {
            steps: {
              type: 'test_steps',
              options: { steps: [{ content: 'a b c d e f g h i j k l', chunks: 12, delay_ms: 400 }] },
            },
          },
        },
        memory: { default: 'keyv', instances: { keyv: { type: 'keyv' } } },
      },
      platform: { agents: { heartbeat_ms: 100, stale_after_ms: 1500, poll_ms: 20, resume_wait_ms: 200 } },
    },
  });
  const prefixes = await Promise.all(c.replicas.map(async (r) => prefixOf(await fetch(`${r.base}/healthz`))));
  t.not(prefixes[0], prefixes[1], 'the replicas have distinct request id prefixes');

  const agent = `failover-${Date.now().toString(36)}`;
  const created = await fetch(`${c.base}/api/v1/agents`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ name: agent, model: 'm', hooks: { auto_memory: false } }),
  });
  t.equal(created.status, 201, 'agent created through nginx');

  const live = new AbortController();
  const res = await fetch(`${c.base}/api/v1/agents/${agent}/chat/stream`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ message: 'go', session_id: 's' }),
    signal: live.signal,
  });
  t.equal(res.status, 200, 'stream started through nginx');
  const runner = c.replicas[prefixes.indexOf(prefixOf(res))];
  if (!t.ok(runner, 'the replica running the stream is known')) return;
  const seen = await readSse(res, (_ev, all) => all.filter((e) => e.type === 'token').length >= 3, live);
  t.equal(seen[0]?.type, 'stream_start', 'the client saw the run start and three tokens');

  // Kill only once the other replica can replay what the client saw (events are flushed every few ms).
  const other = c.replicas.find((r) => r !== runner)!;
  const stored = new AbortController();
  await readSse(
    await fetch(`${other.base}/api/v1/agents/${agent}/sessions/s/stream`, { signal: stored.signal }),
    (_ev, all) => all.length >= seen.length,
    stored,
  );
  await runner.kill();

  let status = '';
  const failed: number[] = [];
  for (let i = 0; i < 600 && status !== 'idle'; i++) {
    // nginx may try the dead replica first: it retries on the other (proxy_next_upstream error).
    const r = await fetch(`${c.base}/api/v1/agents/${agent}/sessions/s/status`);
    if (r.status !== 200) failed.push(r.status);
    else status = ((await r.json()) as { status: string }).status;
    if (status !== 'idle') await new Promise((r) => setTimeout(r, 100));
  }
  t.same(failed, [], 'every status request through nginx answered 200 after the kill');
  t.equal(status, 'idle', 'the run of the killed replica reads idle through nginx');

  const replay = parseSse(await (await fetch(`${c.base}/api/v1/agents/${agent}/sessions/s/stream`)).text());
  t.same(strip(replay.slice(0, seen.length)), strip(seen), `the ${seen.length} events seen before the kill replay`);
  t.comment(`replayed ${replay.length} events (${replay.map((e) => e.type).join(', ')})`);
});
