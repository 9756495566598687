import t, { type Test } from 'tap';
import { WebSocket } from 'ws';
import { startControlledServer } from '../mcp/controlled-server.ts';
import { adminBasic, startCluster } from './cluster.ts';

/**
 * Health dashboards across replicas (Redis pub/sub): a WebSocket connected to
 * replica 1, and one through nginx (the upgrade passes the balancer), receive
 * the health change that a refresh on replica 0 causes, and the entry of a
 * server registered on replica 0. Delays are printed; the wait is bounded only
 * to fail rather than hang.
 */

t.setTimeout(900_000);

type Entry = { status: string; last_checked_iso: string | null; num_tools: number };

function feed(t: Test, url: string) {
  const ws = new WebSocket(url);
  const got: Array<{ at: number; msg: Record<string, Entry> }> = [];
  ws.on('message', (d) => {
    const text = d.toString();
    if (text.startsWith('{')) got.push({ at: Date.now(), msg: JSON.parse(text) });
  });
  ws.on('error', () => {});
  t.teardown(() => ws.close());
  const until = async (pred: (m: Record<string, Entry>) => boolean, label: string) => {
    for (let i = 0; i < 200; i++) {
      const hit = got.find((g) => pred(g.msg));
      if (hit) return hit.at;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${url}: no message for ${label}; got ${JSON.stringify(got.map((g) => g.msg))}`);
  };
  return { ws, got, until };
}

t.test('a health change and a registration on replica 0 reach dashboards on replica 1 and behind nginx', async (t) => {
  const backend = await startControlledServer();
  t.teardown(() => backend.stop());
  const c = await startCluster(t, {
    config: { registry: { health: { interval_seconds: 0, first_check_retry_seconds: [] } } },
  });
  const [a, b] = c.replicas as [(typeof c.replicas)[0], (typeof c.replicas)[0]];
  const json = { 'content-type': 'application/json', ...adminBasic };
  const register = (path: string) =>
    fetch(`${a.base}/api/servers/register`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        server_name: path,
        description: 'feed',
        path: `/${path}`,
        proxy_pass_url: `${backend.base}/mcp`,
      }),
    });
  t.equal((await register('feed')).status, 201);
  const ok = await fetch(`${a.base}/api/servers/feed/refresh`, { method: 'POST', headers: adminBasic });
  t.equal(((await ok.json()) as { health_status: string }).health_status, 'healthy', 'healthy to start with');

  const onB = feed(t, `${b.base.replace('http', 'ws')}/ws/health_status`);
  const viaLb = feed(t, `${c.base.replace('http', 'ws')}/ws/health_status`);
  for (const f of [onB, viaLb]) await f.until((m) => m['/feed']?.status === 'healthy', 'the full status');

  backend.behaviour.failStatus = 500;
  const refresh = await fetch(`${a.base}/api/servers/feed/refresh`, { method: 'POST', headers: adminBasic });
  const answeredAt = Date.now();
  t.match(((await refresh.json()) as { health_status: string }).health_status, /^unhealthy/, 'refresh on replica 0');
  const unhealthy = (m: Record<string, Entry>) => m['/feed']?.status.startsWith('unhealthy') ?? false;
  const bAt = await onB.until(unhealthy, 'the health change');
  const lbAt = await viaLb.until(unhealthy, 'the health change');
  t.pass('the dashboard on replica 1 and the one through nginx got the change');

  const regStart = Date.now();
  t.equal((await register('feed-new')).status, 201);
  const regAt = await onB.until((m) => '/feed-new' in m, 'the registration');
  t.pass('the dashboard on replica 1 got the new server');
  t.comment(
    `after the refresh answered: replica 1 ${bAt - answeredAt} ms, through nginx ${lbAt - answeredAt} ms; ` +
      `registration: ${regAt - regStart} ms after it was sent`,
  );
});
