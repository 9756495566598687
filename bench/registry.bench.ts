import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { openStore } from '../core/store.ts';
import type { AgentRecord, ServerRecord } from '../plugins/registry/catalog/records.ts';
import { mintSelfToken } from '../plugins/registry/auth/self-tokens.ts';
import { load, type BenchModule, type BenchRow, type LoadResult } from './harness.ts';
import { startSwitchboard } from './processes.ts';

const SERVERS = 10_000;
const AGENTS = 10_000;
const SKILLS = [
  'translate',
  'summarize',
  'classify',
  'extract',
  'search',
  'plan',
  'code-review',
  'sql',
  'forecast',
  'ocr',
];

/** 10,000 servers and 10,000 agents written straight into the SQLite store the child will open. */
async function seed(dataDir: string): Promise<void> {
  const store = await openStore({ backend: 'sqlite', dataDir });
  const now = new Date().toISOString();
  const servers = store.collection<ServerRecord>('registry_servers');
  for (let i = 0; i < SERVERS; i++) {
    const path = `/server-${String(i).padStart(5, '0')}`;
    await servers.set(path, {
      id: randomUUID(),
      path,
      server_name: `Server ${i}`,
      description: `Bench server number ${i} for weather, finance and search`,
      proxy_pass_url: `http://127.0.0.1:9/${i}`,
      tags: ['bench', `t${i % 50}`],
      num_tools: 3,
      num_stars: 0,
      is_python: false,
      license: 'MIT',
      metadata: {},
      auth_scheme: 'none',
      auth_credential_encrypted: false,
      supported_transports: ['streamable-http'],
      version: 'v1.0.0',
      status: 'active',
      is_enabled: i % 10 !== 0,
      health_status: 'unknown',
      last_checked_iso: null,
      tools: [{ name: `tool_${i}`, description: 'does things', inputSchema: { type: 'object' } }],
      groups: [],
      versions: [
        { version: 'v1.0.0', status: 'active', proxy_pass_url: `http://127.0.0.1:9/${i}`, registered_at: now },
      ],
      registered_by: 'bench',
      registered_at: now,
      updated_at: now,
    });
  }
  const agents = store.collection<AgentRecord>('registry_agents');
  for (let i = 0; i < AGENTS; i++) {
    const path = `/agent-${String(i).padStart(5, '0')}`;
    await agents.set(path, {
      id: randomUUID(),
      path,
      name: `agent-${i}`,
      description: `Bench agent ${i}`,
      url: `https://agents.example/${i}`,
      version: '1.0.0',
      security_schemes: {},
      skills: [0, 3, 7].map((k) => ({ name: SKILLS[(i + k) % SKILLS.length], description: 'skill' })),
      tags: [`t${i % 20}`],
      visibility: 'public',
      trust_level: (['unverified', 'community', 'verified', 'trusted'] as const)[i % 4],
      is_enabled: true,
      registered_by: 'bench',
      registered_at: now,
      updated_at: now,
      extra: {},
    });
  }
  await store.close();
}

/**
 * The catalog at 10,000 servers and 10,000 agents, with an admin-scoped
 * self-signed token. Latency rows use one connection (the p50 is the service
 * time, not queueing behind nine other requests); /healthz in the same run is the baseline.
 */
const bench: BenchModule = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-bench-registry-'));
  await seed(dataDir);
  const secretKey = randomBytes(32).toString('base64url');
  const server = await startSwitchboard(
    {},
    { SECRET_KEY: secretKey, ADMIN_PASSWORD: randomBytes(12).toString('hex') },
    { args: ['--surfaces', 'registry'], dataDir },
  );
  const { base } = server;
  try {
    const token = await mintSelfToken(new TextEncoder().encode(secretKey), {
      username: 'bench',
      groups: [],
      scopes: ['mcp-registry-user'],
      expiresInSeconds: 3600,
    });
    const auth = { authorization: `Bearer ${token}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const discoverBody = JSON.stringify({ skills: ['translate', 'plan'], tags: ['t3'] });
    const checks: Array<[string, RequestInit]> = [
      [`${base}/api/servers`, { headers: auth }],
      [`${base}/v0/servers?limit=100&cursor=io.switchboard%2Fserver-05000`, { headers: auth }],
      [`${base}/api/agents/discover?max_results=10`, { method: 'POST', headers: json, body: discoverBody }],
    ];
    for (const [url, init] of checks) {
      const r = await fetch(url, init);
      if (r.status !== 200) throw new Error(`${url} answered ${r.status}: ${await r.text()}`);
    }
    const servers = (await (await fetch(checks[0][0], checks[0][1])).json()) as { servers: unknown[] };
    if (servers.servers.length !== SERVERS)
      throw new Error(`expected ${SERVERS} servers, got ${servers.servers.length}`);

    const one = { connections: 1 };
    await load({ url: `${base}/healthz`, duration: 1, ...one });
    const baseline = await load({ url: `${base}/healthz`, headers: auth, ...one });
    const list = await load({ url: checks[0][0], headers: auth, ...one });
    // A query bypasses the per-visibility body cache: the cost of building the list from the index.
    const listQuery = await load({ url: `${checks[0][0]}?query=bench`, headers: auth, ...one });
    const v0 = await load({ url: checks[1][0], headers: auth, ...one });
    const discover = await load({ url: checks[2][0], method: 'POST', headers: json, body: discoverBody, ...one });
    const row = (name: string, r: LoadResult, goal: string, limitMs?: number): BenchRow => ({
      group: 'registry',
      name,
      rps: r.rps,
      p50_ms: r.p50_ms,
      p99_ms: r.p99_ms,
      ratio: baseline.rps ? r.rps / baseline.rps : undefined,
      goal,
      note:
        [
          limitMs !== undefined ? (r.p50_ms < limitMs ? 'met' : 'NOT met') : '',
          r.errors || r.non2xx ? `${r.errors} errors, ${r.non2xx} non-2xx` : '',
        ]
          .filter(Boolean)
          .join('; ') || undefined,
    });
    return [
      row('GET /healthz with a bearer token (baseline, 1 connection)', baseline, 'baseline', undefined),
      row(`GET /api/servers, ${SERVERS} servers (1 connection)`, list, 'p50 < 10 ms', 10),
      row(`GET /api/servers?query=bench, ${SERVERS} matches, uncached (1 connection)`, listQuery, 'informational'),
      row('GET /v0/servers page of 100 (1 connection)', v0, 'p50 < 10 ms', 10),
      row(`POST /api/agents/discover, ${AGENTS} agents (1 connection)`, discover, 'p50 < 20 ms', 20),
    ];
  } finally {
    await server.stop();
  }
};

export default bench;
