import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { mintSelfToken } from '../plugins/registry/auth/self-tokens.ts';
import { load, type BenchModule, type BenchRow } from './harness.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** The registry alone in a child process, with a SECRET_KEY this process knows (to mint the token). */
async function startServer(secretKey: string): Promise<{ base: string; child: ChildProcess }> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-validate-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bin/switchboard.ts'), '--surfaces', 'registry'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, SECRET_KEY: secretKey, ADMIN_PASSWORD: randomBytes(12).toString('hex'), LOG_LEVEL: 'warn', REDIS_URL: '', SWITCHBOARD_CONFIG: '' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { base, child };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('bench server did not start');
}

/**
 * /validate with a self-signed token checking a server, method and tool
 * (a scope with a named tool list, not a wildcard), against /healthz in the
 * same run. Verified tokens are cached, so this measures the steady state.
 */
const bench: BenchModule = async () => {
  const secretKey = randomBytes(32).toString('base64url');
  const { base, child } = await startServer(secretKey);
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
    const baseline = await load({ url: `${base}/healthz` });
    // Same request bytes as /validate: separates the cost of checking from the cost of a bigger request.
    const sameBytes = await load({ url: `${base}/healthz`, headers });
    const validate = await load({ url: `${base}/validate`, headers });
    const ratio = baseline.rps ? validate.rps / baseline.rps : undefined;
    const row = (name: string, r: typeof baseline, extra: Partial<BenchRow> = {}): BenchRow => ({ group: 'validate', name, rps: r.rps, p50_ms: r.p50_ms, p99_ms: r.p99_ms, ...extra });
    const rows: BenchRow[] = [
      row('GET /healthz (baseline)', baseline, { ratio: 1 }),
      row('GET /healthz with the /validate request headers', sameBytes, { ratio: baseline.rps ? sameBytes.rps / baseline.rps : undefined }),
      row('GET /validate (self-signed token, server + tool check)', validate, {
        ratio,
        goal: '>= 0.7x',
        note: [
          sameBytes.rps ? `${(validate.rps / sameBytes.rps).toFixed(2)}x of the same-headers baseline` : '',
          validate.non2xx || validate.errors ? `${validate.non2xx} non-2xx, ${validate.errors} errors` : '',
        ].filter(Boolean).join('; '),
      }),
    ];
    return rows;
  } finally {
    child.kill();
  }
};

export default bench;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  bench().then((rows) => console.table(rows));
}
