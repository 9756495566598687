import { randomBytes } from 'node:crypto';
import { Client } from 'undici';
import { mintSelfToken } from '../plugins/registry/auth/self-tokens.ts';
import { percentiles, type BenchModule, type BenchRow } from './harness.ts';
import { MCP_ADD_BACKEND as BACKEND } from './mcp-backend.ts';
import { startScript, startSwitchboard, type Spawned } from './processes.ts';

const ACCEPT = 'application/json, text/event-stream';

interface Call {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The answer must contain this, so a fast error is never timed as a call. */
  expect: string;
}

/** Sequential calls on one keep-alive connection, each timed with a sub-millisecond clock. */
async function sequential(c: Call, n: number): Promise<number[]> {
  const u = new URL(c.url);
  const client = new Client(u.origin, { pipelining: 1, keepAliveTimeout: 30_000 });
  const samples: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      const res = await client.request({ path: u.pathname, method: 'POST', headers: c.headers, body: c.body });
      const text = await res.body.text();
      if (res.statusCode !== 200 || !text.includes(c.expect))
        throw new Error(`${c.url} answered ${res.statusCode}: ${text.slice(0, 200)}`);
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  } finally {
    await client.close();
  }
  return samples;
}

/** initialize + notifications/initialized: the direct client's MCP session, as the provider keeps one. */
async function mcpSession(url: string): Promise<string> {
  const headers = { 'content-type': 'application/json', accept: ACCEPT };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  const sid = init.headers.get('mcp-session-id');
  await init.text();
  if (!sid) throw new Error(`initialize at ${url} answered ${init.status}`);
  await (
    await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': sid },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text();
  return sid;
}

/**
 * A registry tool invoked through POST /api/v1/tools/{name}/invoke (schema
 * check of the params, the registry provider, the official MCP SDK client,
 * the registry's gateway with its scope check, the backend) against the same
 * tools/call sent straight to the backend on its own MCP session. One
 * connection each, rounds alternating which path goes first; all samples of a
 * path pooled. The goal is on the difference of the p50s.
 */
const bench: BenchModule = async () => {
  const secretKey = randomBytes(32).toString('base64url');
  let backend: Spawned | undefined;
  let sb: Spawned | undefined;
  try {
    backend = await startScript(BACKEND, '/healthz');
    sb = await startSwitchboard(
      { registry: { health: { interval_seconds: 0 } } },
      { SECRET_KEY: secretKey, ADMIN_PASSWORD: randomBytes(12).toString('hex') },
    );
    const token = await mintSelfToken(new TextEncoder().encode(secretKey), {
      username: 'bench',
      groups: [],
      scopes: ['mcp-registry-admin'],
      expiresInSeconds: 3600,
    });
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const reg = await fetch(`${sb.base}/api/servers/register`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Fast', description: 'bench backend', path: '/fast', proxy_pass_url: backend.base }),
    });
    if (reg.status !== 201) throw new Error(`register answered ${reg.status}: ${await reg.text()}`);
    const refresh = await fetch(`${sb.base}/api/servers/fast/refresh`, {
      method: 'POST',
      headers: { authorization: auth.authorization },
    });
    if (!(await refresh.text()).includes('"healthy"'))
      throw new Error('the bench backend is not healthy in the registry');

    const direct: Call = {
      url: `${backend.base}/mcp`,
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        'mcp-session-id': await mcpSession(`${backend.base}/mcp`),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'add', arguments: { a: 20, b: 22 } },
      }),
      expect: '"42"',
    };
    const invoke: Call = {
      url: `${sb.base}/api/v1/tools/fast__add/invoke`,
      headers: { 'content-type': 'application/json', 'x-authorization': auth.authorization },
      body: JSON.stringify({ params: { a: 20, b: 22 } }),
      expect: '"42"',
    };
    await sequential(direct, 300);
    await sequential(invoke, 300);

    const rounds = Number(process.env.BENCH_TOOLS_ROUNDS ?? 6);
    const pooled = { direct: [] as number[], invoke: [] as number[] };
    const started = { direct: 0, invoke: 0 };
    for (let i = 0; i < rounds; i++) {
      for (const name of i % 2 === 0 ? (['direct', 'invoke'] as const) : (['invoke', 'direct'] as const)) {
        const t0 = performance.now();
        pooled[name].push(...(await sequential(name === 'direct' ? direct : invoke, 500)));
        started[name] += performance.now() - t0;
      }
    }
    const d = percentiles(pooled.direct);
    const v = percentiles(pooled.invoke);
    const added = v.p50 - d.p50;
    const rps = (name: 'direct' | 'invoke') => (pooled[name].length * 1000) / started[name];
    const rows: BenchRow[] = [
      {
        group: 'tools',
        name: 'tools/call direct to the MCP server (baseline, 1 connection)',
        rps: rps('direct'),
        p50_ms: d.p50,
        p99_ms: d.p99,
        ratio: 1,
        goal: 'baseline',
        note: `${pooled.direct.length} sequential calls, sub-ms timing`,
      },
      {
        group: 'tools',
        name: 'POST /api/v1/tools/{name}/invoke, registry provider through the gateway (1 connection)',
        rps: rps('invoke'),
        p50_ms: v.p50,
        p99_ms: v.p99,
        ratio: d.p50 / v.p50,
        goal: 'adds < 2 ms at p50',
        note: `adds ${added.toFixed(2)} ms at p50: ${added < 2 ? 'met' : 'NOT met'}`,
      },
    ];
    return rows;
  } finally {
    await sb?.stop();
    await backend?.stop();
  }
};

export default bench;
