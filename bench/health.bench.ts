import { randomBytes } from 'node:crypto';
import { setPriority } from 'node:os';
import WebSocket from 'ws';
import { mintSelfToken } from '../plugins/registry/auth/self-tokens.ts';
import { load, type BenchModule, type BenchRow, type LoadResult } from './harness.ts';
import { startScript, startSwitchboard, type Spawned } from './processes.ts';

const SERVERS = 500;
const BACKENDS = 4;
/**
 * The periodic sweep under test: every INTERVAL_SECONDS, its checks spread
 * over the default sweep_spread (half the interval), at the default
 * concurrency. Shorter than the shipped 300 s so the bench sees several sweeps.
 */
const INTERVAL_SECONDS = 30;
const CONCURRENCY = 20;
const CYCLES = 3;
/**
 * A small MCP backend (the SDK's low-level Server) serving any path, so one
 * process stands in for many registered servers. JSON answers; GET has no
 * standalone stream (405, as the transport spec allows).
 */
const BACKEND = `
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
const tools = ['lookup', 'convert', 'summarize'].map((name) => ({ name, description: name + ' things', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }));
const sessions = new Map();
const http = createServer(async (req, res) => {
  if (req.url === '/healthz') return res.end('ok');
  if (req.method === 'GET') return res.writeHead(405).end();
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  const sid = req.headers['mcp-session-id'];
  let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
  if (!transport) {
    const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true, onsessioninitialized: (id) => sessions.set(id, t) });
    t.onclose = () => sessions.delete(t.sessionId);
    const server = new Server({ name: 'bench-health', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    await server.connect(t);
    transport = t;
  }
  await transport.handleRequest(req, res, body);
});
http.listen(Number(process.env.PORT), '127.0.0.1');
`;

interface Sweep {
  ms: number;
  healthy: number;
  total: number;
}

/** The on-demand sweep (POST /api/internal/healthcheck): as fast as the concurrency allows. */
async function sweepNow(base: string, basic: string): Promise<Sweep> {
  const started = performance.now();
  const r = await fetch(`${base}/api/internal/healthcheck`, { method: 'POST', headers: { authorization: basic } });
  const body = (await r.json()) as Record<string, { status: string }>;
  if (r.status !== 200) throw new Error(`healthcheck answered ${r.status}: ${JSON.stringify(body).slice(0, 200)}`);
  const entries = Object.values(body);
  return {
    ms: performance.now() - started,
    healthy: entries.filter((e) => e.status === 'healthy').length,
    total: entries.length,
  };
}

/** On-demand sweep after on-demand sweep until `work` settles, so the whole load window runs beside one. */
async function sweepsDuring<T>(base: string, basic: string, work: Promise<T>): Promise<{ result: T; sweeps: Sweep[] }> {
  let finished = false;
  const sweeps: Sweep[] = [];
  const loop = (async () => {
    while (!finished) sweeps.push(await sweepNow(base, basic));
  })();
  const result = await work.finally(() => (finished = true));
  await loop;
  return { result, sweeps };
}

/**
 * Periodic sweeps seen from outside, through the live feed (/ws/health_status):
 * every check is one message, so a sweep starts with the first message after
 * a quiet spell and ends when every server has been reported again.
 */
class SweepWatch {
  private readonly ws: WebSocket;
  private last = 0;
  private current?: { started: number; paths: Set<string>; ended?: number; healthy: number; firstCheck: number };
  private readonly waiters: Array<() => void> = [];

  constructor(base: string) {
    this.ws = new WebSocket(`${base.replace('http', 'ws')}/ws/health_status`);
    let first = true;
    this.ws.on('message', (data) => {
      if (first) return void (first = false); // the full status on connect
      const text = data.toString();
      if (!text.startsWith('{')) return;
      const now = performance.now();
      if (!this.current || this.current.ended) {
        // A message after more than a second of silence opens a new sweep (checks of a sweep come every interval x spread / servers).
        if (now - this.last > 1500) this.current = { started: now, paths: new Set(), healthy: 0, firstCheck: Infinity };
      }
      this.last = now;
      const cur = this.current;
      if (cur && !cur.ended) {
        for (const [path, e] of Object.entries(
          JSON.parse(text) as Record<string, { status: string; last_checked_iso: string }>,
        )) {
          if (!cur.paths.has(path) && e.status === 'healthy') cur.healthy++;
          cur.paths.add(path);
          cur.firstCheck = Math.min(cur.firstCheck, Date.parse(e.last_checked_iso));
        }
        // Results arrive in batches written about once a second; the sweep is timed from its first check to its last write.
        if (cur.paths.size >= SERVERS) cur.ended = Date.now();
      }
      for (const w of this.waiters.splice(0)) w();
    });
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
  }

  private async until(what: string, done: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`health bench: gave up waiting for ${what}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200).unref();
      });
    }
  }

  /** Resolves when a new sweep has begun (the one running now, if any, is skipped). */
  async nextStart(): Promise<void> {
    const before = this.current;
    await this.until(
      'a periodic sweep to start',
      () => this.current !== before && this.current !== undefined && !this.current.ended,
      (INTERVAL_SECONDS + 60) * 1000,
    );
  }

  /** Resolves with the sweep once every server was reported. */
  async end(): Promise<Sweep> {
    await this.until(
      'the periodic sweep to end',
      () => this.current?.ended !== undefined,
      (INTERVAL_SECONDS + 60) * 1000,
    );
    const c = this.current!;
    return { ms: c.ended! - c.firstCheck, healthy: c.healthy, total: c.paths.size };
  }

  /** Whether any check was reported since `t` (performance.now()). */
  quietSince(t: number): boolean {
    return this.last < t;
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * Health-checking 500 registered servers: one sweep's duration against the
 * configured interval, and the API's p99 while sweeps run against its idle p99.
 */
const bench: BenchModule = async () => {
  const secretKey = randomBytes(32).toString('base64url');
  const password = randomBytes(12).toString('hex');
  const backends: Spawned[] = [];
  let sb: Spawned | undefined;
  try {
    for (let i = 0; i < BACKENDS; i++) {
      const b = await startScript(BACKEND, '/healthz');
      backends.push(b);
      // In production the backends run elsewhere; here they share two cores with Switchboard and the load generator,
      // and at normal priority their work (an SDK server session per check) outweighs Switchboard's own share of a sweep.
      // Lowest priority: they answer with the CPU left over, so the API latency measured is what the sweep costs Switchboard.
      setPriority(b.child.pid!, 19);
    }
    sb = await startSwitchboard(
      { registry: { health: { interval_seconds: INTERVAL_SECONDS, concurrency: CONCURRENCY, timeout_seconds: 10 } } },
      { SECRET_KEY: secretKey, ADMIN_USER: 'admin', ADMIN_PASSWORD: password },
    );
    const base = sb.base;
    const token = await mintSelfToken(new TextEncoder().encode(secretKey), {
      username: 'bench',
      groups: [],
      scopes: ['mcp-registry-admin'],
      expiresInSeconds: 3600,
    });
    const auth = { authorization: `Bearer ${token}` };
    const basic = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;

    // Registered ten at a time; each new server gets its first check at once (through the same bounded pool).
    for (let i = 0; i < SERVERS; i += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, SERVERS - i) }, async (_, k) => {
          const n = i + k;
          const r = await fetch(`${base}/api/servers/register`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({
              name: `Health ${n}`,
              description: 'health bench server',
              path: `/h${n}`,
              proxy_pass_url: `${backends[n % BACKENDS].base}/s${n}`,
            }),
          });
          if (r.status !== 201) throw new Error(`register /h${n} answered ${r.status}: ${await r.text()}`);
        }),
      );
    }
    for (let tries = 0; ; tries++) {
      const r = await fetch(`${base}/api/servers/health`, { headers: auth });
      const all = Object.values(
        ((await r.json()) as { servers: Record<string, { last_checked_iso: string | null }> }).servers,
      );
      if (all.length === SERVERS && all.every((e) => e.last_checked_iso)) break;
      if (tries > 1200) throw new Error('the first checks of the registered servers did not finish in 2 minutes');
      await new Promise((r) => setTimeout(r, 100));
    }

    const watch = new SweepWatch(base);
    await watch.opened();
    try {
      const onDemand = await sweepNow(base, basic);
      if (onDemand.healthy !== SERVERS)
        throw new Error(`on-demand sweep: ${onDemand.healthy}/${onDemand.total} healthy`);
      // Warm the API path.
      await load({ url: `${base}/api/servers`, headers: auth, duration: 1 });

      // Each cycle: both loads while a periodic sweep runs (it spreads over half the interval), then both again once it
      // has ended, before the next tick. The machine is shared, so of CYCLES cycles each row keeps its best p99.
      const endpoints = [
        { url: '/api/servers', headers: auth },
        { url: '/health', headers: {} },
      ];
      type Sample = { busy: LoadResult[]; idle: LoadResult[]; checksDuringIdle: number };
      const samples: Sample[] = endpoints.map(() => ({ busy: [], idle: [], checksDuringIdle: 0 }));
      const sweeps: Sweep[] = [];
      for (let c = 0; c < CYCLES; c++) {
        await watch.nextStart();
        for (const [i, e] of endpoints.entries())
          samples[i].busy.push(await load({ url: `${base}${e.url}`, headers: e.headers }));
        sweeps.push(await watch.end());
        for (const [i, e] of endpoints.entries()) {
          const from = performance.now();
          samples[i].idle.push(await load({ url: `${base}${e.url}`, headers: e.headers }));
          if (!watch.quietSince(from)) samples[i].checksDuringIdle++;
        }
      }
      // For comparison, the same load beside back-to-back on-demand sweeps (unpaced, as fast as the concurrency allows).
      await watch.nextStart();
      await watch.end();
      const unpaced = await sweepsDuring(base, basic, load({ url: `${base}/api/servers`, headers: auth }));

      const best = (rs: LoadResult[]) => rs.reduce((a, r) => (r.p99_ms < a.p99_ms ? r : a));
      const errs = (r: LoadResult) => (r.errors || r.non2xx ? `${r.errors} errors, ${r.non2xx} non-2xx` : '');
      const apiRows = (name: string, sample: Sample): BenchRow[] => {
        const idle = best(sample.idle);
        const busy = best(sample.busy);
        const ratio = idle.p99_ms ? busy.p99_ms / idle.p99_ms : NaN;
        const all = (rs: LoadResult[]) => `p99s ${rs.map((r) => r.p99_ms.toFixed(2)).join('/')} ms`;
        return [
          {
            group: 'health',
            name: `${name}, idle (baseline)`,
            rps: idle.rps,
            p50_ms: idle.p50_ms,
            p99_ms: idle.p99_ms,
            note: [
              all(sample.idle),
              sample.checksDuringIdle ? `${sample.checksDuringIdle} idle loads saw a check` : '',
              errs(idle),
            ]
              .filter(Boolean)
              .join('; '),
          },
          {
            group: 'health',
            name: `${name}, during a periodic sweep`,
            rps: busy.rps,
            p50_ms: busy.p50_ms,
            p99_ms: busy.p99_ms,
            ratio,
            goal: 'p99 <= 2x idle p99',
            note: [`p99 ${ratio.toFixed(2)}x idle: ${ratio <= 2 ? 'met' : 'NOT met'}`, all(sample.busy), errs(busy)]
              .filter(Boolean)
              .join('; '),
          },
        ];
      };
      const [list, health] = samples;
      const slowest = sweeps.reduce((a, x) => (x.ms > a.ms ? x : a));
      const periodic = slowest.ms / 1000;
      return [
        {
          group: 'health',
          name: `periodic sweep of ${SERVERS} servers (interval ${INTERVAL_SECONDS} s, spread 0.5, concurrency ${CONCURRENCY}, ${BACKENDS} SDK backends at nice 19)`,
          ratio: periodic / INTERVAL_SECONDS,
          goal: 'within one interval',
          note: `slowest of ${sweeps.length}: ${periodic.toFixed(1)} s = ${(periodic / INTERVAL_SECONDS).toFixed(2)} of the interval: ${periodic < INTERVAL_SECONDS ? 'met' : 'NOT met'}; ${slowest.healthy}/${SERVERS} healthy`,
        },
        {
          group: 'health',
          name: `on-demand sweep of ${SERVERS} servers (POST /api/internal/healthcheck, unpaced)`,
          note: `${(onDemand.ms / 1000).toFixed(2)} s, ${Math.round(SERVERS / (onDemand.ms / 1000))} checks/s: the capacity behind the periodic pace`,
        },
        ...apiRows('GET /api/servers (500 servers, bearer)', list),
        {
          group: 'health',
          name: 'GET /api/servers, during back-to-back on-demand sweeps (unpaced)',
          rps: unpaced.result.rps,
          p50_ms: unpaced.result.p50_ms,
          p99_ms: unpaced.result.p99_ms,
          ratio: best(list.idle).p99_ms ? unpaced.result.p99_ms / best(list.idle).p99_ms : undefined,
          goal: 'none (admin action; for comparison)',
          note: [
            `${unpaced.sweeps.length} sweeps of ${(unpaced.sweeps.reduce((a, x) => a + x.ms, 0) / Math.max(1, unpaced.sweeps.length) / 1000).toFixed(1)} s`,
            errs(unpaced.result),
          ]
            .filter(Boolean)
            .join('; '),
        },
        ...apiRows('GET /health', health),
      ];
    } finally {
      watch.close();
    }
  } finally {
    await sb?.stop();
    await Promise.all(backends.map((b) => b.stop()));
  }
};

export default bench;
