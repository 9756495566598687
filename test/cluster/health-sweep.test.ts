import t from 'tap';
import { startControlledServer } from '../mcp/controlled-server.ts';
import { adminBasic, startCluster } from './cluster.ts';

/**
 * Two replicas, 100 servers, periodic sweeps every INTERVAL_S: the backend
 * counts MCP `initialize` requests (one per health probe) per server. One sweep
 * per interval across the cluster means about 100 probes per interval; each
 * replica sweeping on its own would mean 200. The window is WINDOW intervals
 * long and starts at an arbitrary moment, so a sweep may straddle each end:
 * every server must be probed WINDOW - 1 to WINDOW + 1 times, where two
 * uncoordinated replicas probe each 2·WINDOW times.
 */

t.setTimeout(900_000);

const SERVERS = 100;
const INTERVAL_S = 10;
const WINDOW = 3;

t.test('2 replicas, 100 servers: one sweep per interval across the cluster, not one per replica', async (t) => {
  const backend = await startControlledServer();
  t.teardown(() => backend.stop());
  const c = await startCluster(t, {
    config: {
      registry: {
        health: { interval_seconds: INTERVAL_S, sweep_spread: 0.3, first_check_retry_seconds: [] },
      },
    },
  });

  const paths = Array.from({ length: SERVERS }, (_, i) => `sweep-${i}`);
  const register = async (path: string) => {
    const res = await fetch(`${c.base}/api/servers/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...adminBasic },
      body: JSON.stringify({
        server_name: path,
        description: 'sweep test',
        path: `/${path}`,
        proxy_pass_url: `${backend.base}/${path}/mcp`,
      }),
    });
    return res.status === 201 ? undefined : `${path}: ${res.status} ${await res.text()}`;
  };
  const failures: string[] = [];
  // Concurrent batches through nginx, so both replicas write at the same moment: each replica's catalog must still
  // end up with the other's records (the generation counter in plugins/registry/catalog/repository.ts).
  for (let i = 0; i < SERVERS; i += 5) {
    const batch = await Promise.all(paths.slice(i, i + 5).map(register));
    failures.push(...batch.filter((x): x is string => !!x));
  }
  t.same(failures, [], `${SERVERS} servers registered through nginx`);
  for (const r of c.replicas) {
    const res = await fetch(`${r.base}/api/servers`, { headers: adminBasic });
    const listed = new Set(((await res.json()) as { servers: { path: string }[] }).servers.map((s) => s.path));
    t.same(
      paths.filter((p) => !listed.has(`/${p}`)),
      [],
      `replica ${r.index} lists all ${SERVERS} servers, whichever replica registered them`,
    );
  }

  // Let the checks of new servers finish, then count probes per server over WINDOW intervals.
  await new Promise((r) => setTimeout(r, 3000));
  const from = backend.seen.length;
  await new Promise((r) => setTimeout(r, WINDOW * INTERVAL_S * 1000));
  const perServer = new Map<string, number>(paths.map((p) => [p, 0]));
  for (const req of backend.seen.slice(from)) {
    if (req.rpc !== 'initialize') continue;
    const name = req.path.split('/')[1] ?? '';
    if (perServer.has(name)) perServer.set(name, perServer.get(name)! + 1);
  }
  const counts = [...perServer.values()];
  const total = counts.reduce((a, b) => a + b, 0);
  t.comment(
    `probes in ${WINDOW} intervals of ${INTERVAL_S} s: ${total} (${(total / WINDOW).toFixed(0)} per interval ` +
      `for ${SERVERS} servers); per server min ${Math.min(...counts)}, max ${Math.max(...counts)}`,
  );
  const outside = [...perServer].filter(([, n]) => n < WINDOW - 1 || n > WINDOW + 1);
  t.same(outside, [], `every server probed ${WINDOW - 1} to ${WINDOW + 1} times in ${WINDOW} intervals`);
  t.ok(total <= SERVERS * (WINDOW + 1), `at most ${SERVERS * (WINDOW + 1)} probes in all (got ${total})`);
});
