import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { mintSelfToken } from '../plugins/registry/auth/self-tokens.ts';
import { startBare } from './bare-baseline.ts';
import { load, median, type BenchModule, type BenchRow } from './harness.ts';
import { startSwitchboard, stopChild } from './processes.ts';

/**
 * /validate with a self-signed token checking a server, method and tool (a
 * scope with a named tool list, not a wildcard). The goal is a ratio of "the
 * baseline route": the bare Fastify route of the foundation bench, in its own
 * process, measured in the same rounds. /healthz of the same Switchboard, plain
 * and with /validate's request headers, is shown beside it to tell the cost of
 * the check from the cost of the service around it. Verified tokens are
 * cached, so this measures the steady state.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

const bench: BenchModule = async () => {
  // The registry alone, with a SECRET_KEY this process knows (to mint the token).
  const secretKey = randomBytes(32).toString('base64url');
  const bare = await startBare();
  const server = await startSwitchboard(
    {},
    { SECRET_KEY: secretKey, ADMIN_PASSWORD: randomBytes(12).toString('hex') },
    { args: ['--surfaces', 'registry'] },
  );
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
      'x-body': JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'current_time_by_timezone', arguments: { tz: 'UTC' } },
      }),
    };
    const check = await fetch(`${base}/validate`, { headers });
    if (check.status !== 200) throw new Error(`/validate answered ${check.status}: ${await check.text()}`);

    // Warm-up, then rounds: the machine is shared, and each ratio is taken within one round (two loads
    // back to back), so a burst of someone else's work moves one round, not the verdict.
    await load({ url: bare.url, duration: 1 });
    await load({ url: `${base}/healthz`, duration: 1 });
    await load({ url: `${base}/validate`, headers, duration: 1 });
    type Result = Awaited<ReturnType<typeof load>>;
    const best = (a: Result | undefined, b: Result) => (a && a.rps >= b.rps ? a : b);
    let baseline: Result | undefined;
    let health: Result | undefined;
    let sameBytes: Result | undefined;
    let validate: Result | undefined;
    const paired: number[] = [];
    const pairedHealth: number[] = [];
    const pairedSame: number[] = [];
    const healthOfBare: number[] = [];
    const sameOfBare: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The judged pair back to back, in turn one and the other first, so drift of the shared
      // machine falls on both sides of the ratio alike; the two /healthz rows for comparison after it.
      let b: Result;
      let v: Result;
      if (round % 2 === 0) {
        b = await load({ url: bare.url });
        v = await load({ url: `${base}/validate`, headers });
      } else {
        v = await load({ url: `${base}/validate`, headers });
        b = await load({ url: bare.url });
      }
      const h = await load({ url: `${base}/healthz` });
      // Same request bytes as /validate: separates the cost of checking from the cost of a bigger request.
      const s = await load({ url: `${base}/healthz`, headers });
      baseline = best(baseline, b);
      health = best(health, h);
      sameBytes = best(sameBytes, s);
      validate = best(validate, v);
      paired.push(v.rps / b.rps);
      pairedHealth.push(v.rps / h.rps);
      pairedSame.push(v.rps / s.rps);
      healthOfBare.push(h.rps / b.rps);
      sameOfBare.push(s.rps / b.rps);
    }
    if (!baseline || !health || !sameBytes || !validate) throw new Error('no rounds ran');
    const ratio = median(paired);
    const row = (name: string, r: Result, extra: Partial<BenchRow> = {}): BenchRow => ({
      group: 'validate',
      name,
      rps: r.rps,
      p50_ms: r.p50_ms,
      p99_ms: r.p99_ms,
      ...extra,
    });
    const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
    return [
      row('bare Fastify route, same as the foundation baseline (baseline)', baseline, { ratio: 1 }),
      row('GET /healthz of the same Switchboard', health, { ratio: median(healthOfBare) }),
      row('GET /healthz with the /validate request headers', sameBytes, { ratio: median(sameOfBare) }),
      row('GET /validate (self-signed token, server + tool check)', validate, {
        ratio,
        goal: '>= 0.7x',
        note: [
          `${ratio >= 0.7 ? 'met' : 'NOT met'}: median of ${ROUNDS} paired rounds against the bare route, alternating which goes first (${list(paired)}); req/s and latency of the best round`,
          `${median(pairedHealth).toFixed(2)}x of /healthz (${list(pairedHealth)}), ${median(pairedSame).toFixed(2)}x of /healthz with the same headers`,
          validate.non2xx || validate.errors ? `${validate.non2xx} non-2xx, ${validate.errors} errors` : '',
        ]
          .filter(Boolean)
          .join('; '),
      }),
    ];
  } finally {
    await server.stop();
    await stopChild(bare.child);
  }
};

export default bench;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  bench().then((rows) => console.table(rows));
}
