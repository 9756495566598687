import { startCluster, adminBasic } from '../test/cluster/cluster.ts';
import { startEverything } from '../test/mcp/servers.ts';
import { median, percentiles, type BenchModule, type BenchRow } from './harness.ts';

/**
 * Legacy SSE across replicas: one SSE session opened on replica 0 of a
 * two-replica cluster; tools/call (echo) posted to replica 0 itself (local)
 * and to replica 1 (relayed to replica 0 over Redis pub/sub), alternating, in
 * sequence. The time is from sending the POST to the answer arriving on the
 * stream, so it includes the backend; the ratio is relayed p50 / local p50.
 */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);

const bench: BenchModule = async () => {
  const teardowns: Array<() => unknown> = [];
  const t = { teardown: (fn: () => unknown) => void teardowns.push(fn) };
  const backend = await startEverything('sse');
  teardowns.push(() => backend.stop());
  try {
    const c = await startCluster(t, { config: { registry: { health: { interval_seconds: 0 } } } });
    const reg = await fetch(`${c.base}/api/servers/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...adminBasic },
      body: JSON.stringify({
        server_name: 'Everything',
        description: 'sse relay bench',
        path: '/everything',
        proxy_pass_url: backend.url.replace(/\/sse$/, ''),
        supported_transports: ['sse'],
      }),
    });
    if (reg.status !== 201) throw new Error(`register: ${reg.status} ${await reg.text()}`);

    const stream = new AbortController();
    teardowns.push(() => stream.abort());
    const opened = await fetch(`${c.replicas[0]!.base}/everything/sse`, {
      headers: { ...adminBasic, accept: 'text/event-stream' },
      signal: stream.signal,
    });
    const reader = opened.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    // Resolvers of answers by JSON-RPC id, fed by one loop over the stream.
    const waiting = new Map<number, () => void>();
    let endpoint: string | undefined;
    let gotEndpoint: () => void = () => {};
    const endpointSeen = new Promise<void>((r) => (gotEndpoint = r));
    void (async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        text += decoder.decode(r.value, { stream: true }).replace(/\r\n/g, '\n');
        const events = text.split('\n\n');
        text = events.pop() ?? '';
        for (const ev of events) {
          const ep = /^event: endpoint\ndata: (\S+)/m.exec(ev);
          if (ep) {
            endpoint = ep[1];
            gotEndpoint();
            continue;
          }
          const id = /"id":(\d+)/.exec(ev)?.[1];
          if (id) waiting.get(Number(id))?.();
        }
      }
    })().catch(() => {});
    await endpointSeen;

    let nextId = 1;
    const call = async (base: string, method: string, params: unknown): Promise<number> => {
      const id = nextId++;
      const answered = new Promise<void>((r) => waiting.set(id, r));
      const start = performance.now();
      const res = await fetch(`${base}${endpoint}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...adminBasic },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      });
      if (res.status !== 202) throw new Error(`post on ${base}: ${res.status} ${await res.text()}`);
      await answered;
      waiting.delete(id);
      return performance.now() - start;
    };
    await call(c.replicas[0]!.base, 'initialize', {
      protocolVersion: '2024-11-05',
      capabilities: {},
      clientInfo: { name: 'bench', version: '1' },
    });
    const echo = { name: 'echo', arguments: { message: 'bench' } };
    for (let i = 0; i < 20; i++) await call(c.replicas[i % 2]!.base, 'tools/call', echo); // warm-up
    const local: number[] = [];
    const relayed: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      local.push(await call(c.replicas[0]!.base, 'tools/call', echo));
      relayed.push(await call(c.replicas[1]!.base, 'tools/call', echo));
    }
    const l = percentiles(local);
    const r = percentiles(relayed);
    const rows: BenchRow[] = [
      {
        group: 'sse-relay',
        name: 'SSE tools/call posted to the stream replica',
        p50_ms: l.p50,
        p99_ms: l.p99,
        ratio: 1,
        note: `baseline; ${SAMPLES} sequential calls, POST to answer on the stream`,
      },
      {
        group: 'sse-relay',
        name: 'SSE tools/call posted to the other replica (relayed)',
        p50_ms: r.p50,
        p99_ms: r.p99,
        ratio: r.p50 / l.p50,
        note: `p50 ratio; median per-pair difference ${median(relayed.map((x, i) => x - local[i]!)).toFixed(2)} ms`,
      },
    ];
    return rows;
  } finally {
    for (const fn of teardowns.reverse()) await fn();
  }
};

export default bench;
