import t from 'tap';
import { logTail, startCluster } from './cluster.ts';

/**
 * Redis killed (SIGKILL) under write traffic through nginx and two replicas,
 * then started again on its append-only file (`appendfsync always`). Checked:
 * every answer is a 2xx or a 503 SB_ERR_STORE_UNAVAILABLE (nothing hangs, no
 * other 5xx: nginx's 502/504 would mean a replica fell over), /readyz reports
 * the store down, writes succeed again without restarting a replica, and every
 * write that was acknowledged before, during or after the outage is there
 * afterwards. Times are measured and printed, not asserted (the machine is
 * shared); the only time bound is the hang detector.
 */

t.setTimeout(900_000);

const HANG_MS = 20_000;
const WRITERS = 4;
const memory = { 'content-type': 'application/json', 'x-provider-memory': 'keyv' };

interface Outcome {
  key: string;
  status: number;
  code?: string;
  sentAt: number;
  ms: number;
}

t.test('Redis stopped mid-traffic: 503s, no other 5xx, recovery, no acknowledged write lost', async (t) => {
  const c = await startCluster(t, {
    appendfsync: 'always',
    config: { store: { command_timeout_ms: 1000 } },
  });
  const ns = `outage-${Date.now().toString(36)}`;
  const outcomes: Outcome[] = [];
  let seq = 0;
  let running = true;

  const write = async (): Promise<Outcome> => {
    const key = `k${++seq}`;
    const sentAt = Date.now();
    const abort = AbortSignal.timeout(HANG_MS);
    try {
      const res = await fetch(`${c.base}/api/v1/memory/${ns}`, {
        method: 'POST',
        headers: memory,
        body: JSON.stringify({ key, content: `value of ${key}` }),
        signal: abort,
      });
      const body = (await res.json().catch(() => ({}))) as { code?: string };
      return { key, status: res.status, code: body.code, sentAt, ms: Date.now() - sentAt };
    } catch (err) {
      return { key, status: 0, code: (err as Error).name, sentAt, ms: Date.now() - sentAt };
    }
  };
  const writer = async () => {
    while (running) outcomes.push(await write());
  };
  const writers = Array.from({ length: WRITERS }, writer);

  const acked = () => outcomes.filter((o) => o.status >= 200 && o.status < 300).length;
  while (acked() < 40) await new Promise((r) => setTimeout(r, 50));

  await c.redis.stop();
  const stoppedAt = Date.now();
  // Readiness through the balancer while Redis is gone (either replica answers).
  const ready = await fetch(`${c.base}/readyz`, { signal: AbortSignal.timeout(HANG_MS) });
  const readyBody = (await ready.json()) as { checks?: Record<string, string> };
  t.equal(ready.status, 503, '/readyz is 503 while Redis is down');
  t.equal(readyBody.checks?.['store/redis'], 'down', '/readyz names the store down');
  while (outcomes.filter((o) => o.sentAt > stoppedAt + 200).length < 20) await new Promise((r) => setTimeout(r, 50));

  await c.redis.start();
  const restartedAt = Date.now();
  let recoveredAt = 0;
  while (!recoveredAt) {
    const o = outcomes.find((x) => x.sentAt >= restartedAt && x.status >= 200 && x.status < 300);
    if (o) recoveredAt = o.sentAt + o.ms;
    else if (Date.now() - restartedAt > 60_000) break;
    else await new Promise((r) => setTimeout(r, 50));
  }
  // Some more traffic after recovery, then stop the writers.
  await new Promise((r) => setTimeout(r, 1000));
  running = false;
  await Promise.all(writers);

  const during = outcomes.filter((o) => o.sentAt > stoppedAt && o.sentAt + o.ms < restartedAt);
  const unavailable = during.filter((o) => o.status === 503);
  const others = outcomes.filter((o) => !(o.status >= 200 && o.status < 300) && o.status !== 503);
  t.same(
    others.map((o) => `${o.key}: ${o.status} ${o.code ?? ''}`),
    [],
    'every answer is a 2xx or a 503 (no hang, no 502/504 from nginx, no other 5xx)',
  );
  t.ok(unavailable.length > 0, `requests while Redis was down got 503 (${unavailable.length} of ${during.length})`);
  t.same(
    [...new Set(outcomes.filter((o) => o.status === 503).map((o) => o.code))],
    ['SB_ERR_STORE_UNAVAILABLE'],
    'every 503 is SB_ERR_STORE_UNAVAILABLE',
  );
  if (!t.ok(recoveredAt, 'writes succeed again after Redis returns, no replica restarted'))
    t.comment(logTail(c.dir, 'replica-0.log'));

  // Zero acknowledged writes lost: each 2xx key reads back through the balancer (both replicas serve reads).
  const ackedKeys = outcomes.filter((o) => o.status >= 200 && o.status < 300).map((o) => o.key);
  const lost: string[] = [];
  for (const key of ackedKeys) {
    const res = await fetch(`${c.base}/api/v1/memory/${ns}/${key}`, { headers: memory });
    const body = (await res.json().catch(() => ({}))) as { content?: string };
    if (res.status !== 200 || body.content !== `value of ${key}`) lost.push(`${key}: ${res.status}`);
  }
  t.same(lost, [], `all ${ackedKeys.length} acknowledged writes read back after the crash`);

  const slowest503 = Math.max(0, ...unavailable.map((o) => o.ms));
  t.comment(
    `writes: ${outcomes.length} sent, ${ackedKeys.length} acknowledged, ${unavailable.length} answered 503 while ` +
      `Redis was down (slowest ${slowest503} ms, store.command_timeout_ms 1000); first write acknowledged ` +
      `${recoveredAt - restartedAt} ms after redis-server was started again; lost ${lost.length}`,
  );
});
