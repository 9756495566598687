import t from 'tap';
import { adminBasic, startCluster } from './cluster.ts';

/**
 * Two replicas on one Redis behind nginx: what one replica writes, the other
 * answers at once. Both replicas read the list first, so a per-replica cache
 * filled before the write is part of what is checked.
 */

t.setTimeout(900_000);

const json = { 'content-type': 'application/json', ...adminBasic };

t.test('a server registered through the load balancer is seen by both replicas at once', async (t) => {
  const c = await startCluster(t);
  const names = async (base: string) => {
    const res = await fetch(`${base}/api/servers`, { headers: adminBasic });
    t.equal(res.status, 200, `GET ${base}/api/servers`);
    return ((await res.json()) as { servers: { path: string }[] }).servers.map((s) => s.path);
  };
  for (const r of c.replicas) t.notOk((await names(r.base)).includes('/lb-weather'), `replica ${r.index}: not yet`);

  const reg = await fetch(`${c.base}/api/servers/register`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({
      server_name: 'LB weather',
      description: 'registered through nginx',
      path: '/lb-weather',
      proxy_pass_url: 'http://127.0.0.1:9/mcp',
    }),
  });
  t.equal(reg.status, 201, await reg.text());
  // Straight after the 201, with no wait: each replica directly, then the balancer twice (both replicas).
  for (const r of c.replicas) t.ok((await names(r.base)).includes('/lb-weather'), `replica ${r.index} lists it`);
  for (let i = 0; i < 2; i++) t.ok((await names(c.base)).includes('/lb-weather'), `through nginx, request ${i + 1}`);

  const one = await Promise.all(
    c.replicas.map((r) => fetch(`${r.base}/api/servers/lb-weather`, { headers: adminBasic }).then((x) => x.status)),
  );
  t.same(one, [200, 200], 'the detail route answers on both replicas');

  // Delete on one replica: gone on the other at once too.
  const del = await fetch(`${c.replicas[1]!.base}/api/servers/lb-weather`, { method: 'DELETE', headers: adminBasic });
  t.equal(del.status, 200, await del.text());
  t.notOk((await names(c.replicas[0]!.base)).includes('/lb-weather'), 'removed on replica 1, gone on replica 0');
});
