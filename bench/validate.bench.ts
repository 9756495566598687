import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { mintSelfToken } from '../plugins/registry/auth/self-tokens.ts';
import { load, median, type BenchModule, type BenchRow } from './harness.ts';
import { startSwitchboard } from './processes.ts';

/**
 * /validate with a self-signed token checking a server, method and tool
 * (a scope with a named tool list, not a wildcard), against /healthz in the
 * same run. Verified tokens are cached, so this measures the steady state.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const bench: BenchModule = async () => {
  // The registry alone, with a SECRET_KEY this process knows (to mint the token).
  const secretKey = randomBytes(32).toString('base64url');
  const server = await startSwitchboard({}, { SECRET_KEY: secretKey, ADMIN_PASSWORD: randomBytes(12).toString('hex') }, { args: ['--surfaces', 'registry'] });
  const { base } = server;
  try {
    const token = await mintSelfToken(new TextEncoder().encode(secretKey), {
      username: 'bench',
      groups: ['mcp-servers-restricted'],
      scopes: ['mcp-servers-restricted'],
      expiresInSeconds: 3600,
    });
    const headers = {
      authorization: `Bearer ${token}`,
      'x-original-url': `${base}/currenttime/mcp`,
      'x-original-method': 'POST',
      'x-body': JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'current_time_by_timezone', arguments: { tz: 'UTC' } } }),
    };
    const check = await fetch(`${base}/validate`, { headers });
    if (check.status !== 200) throw new Error(`/validate answered ${check.status}: ${await check.text()}`);

    await load({ url: `${base}/healthz`, duration: 1 }); // warm-up
    await load({ url: `${base}/validate`, headers, duration: 1 });
    // The machine is shared: rounds are interleaved and each measure keeps its best round,
    // so a burst of someone else's load does not land on one side of the ratio only.
    type Result = Awaited<ReturnType<typeof load>>;
    const best = (a: Result | undefined, b: Result) => (a && a.rps >= b.rps ? a : b);
    let baseline: Result | undefined;
    let sameBytes: Result | undefined;
    let validate: Result | undefined;
    const paired: number[] = [];
    const pairedSame: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const b = await load({ url: `${base}/healthz` });
      // Same request bytes as /validate: separates the cost of checking from the cost of a bigger request.
      const s = await load({ url: `${base}/healthz`, headers });
      const v = await load({ url: `${base}/validate`, headers });
      baseline = best(baseline, b);
      sameBytes = best(sameBytes, s);
      validate = best(validate, v);
      paired.push(v.rps / b.rps);
      pairedSame.push(v.rps / s.rps);
    }
    if (!baseline || !sameBytes || !validate) throw new Error('no rounds ran');
    const ratio = median(paired);
    const row = (name: string, r: Result, extra: Partial<BenchRow> = {}): BenchRow => ({ group: 'validate', name, rps: r.rps, p50_ms: r.p50_ms, p99_ms: r.p99_ms, ...extra });
    const rows: BenchRow[] = [
      row('GET /healthz (baseline)', baseline, { ratio: 1 }),
      row('GET /healthz with the /validate request headers', sameBytes, { ratio: baseline.rps ? sameBytes.rps / baseline.rps : undefined }),
      row('GET /validate (self-signed token, server + tool check)', validate, {
        ratio,
        goal: '>= 0.7x',
        note: [
          `${ratio >= 0.7 ? 'met' : 'NOT met'}: median of ${ROUNDS} interleaved rounds (${paired.map((x) => x.toFixed(2)).join(', ')}); req/s and latency of the best round`,
          `${median(pairedSame).toFixed(2)}x of the same-headers baseline`,
          validate.non2xx || validate.errors ? `${validate.non2xx} non-2xx, ${validate.errors} errors` : '',
        ].filter(Boolean).join('; '),
      }),
    ];
    return rows;
  } finally {
    await server.stop();
  }
};

export default bench;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  bench().then((rows) => console.table(rows));
}
