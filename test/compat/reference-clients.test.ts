import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';

/**
 * The reference clients' request shapes from Python (issue 14): Switchboard
 * listens on a free loopback port, reference_clients.py (standard library only)
 * sends what the reference platform client and registry CLIs send, and the test
 * fails when the script exits non-zero. Its per-check lines are in the output.
 */
const script = fileURLToPath(new URL('./reference_clients.py', import.meta.url));

t.test("the reference clients' requests parse as those clients expect", async (t) => {
  const app = await makeApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const token = (await asUser(app, ['mcp-registry-admin'], 'compat-admin')).authorization.slice('Bearer '.length);

  const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      'python3',
      [script, base],
      { env: { ...process.env, SB_REGISTRY_TOKEN: token }, timeout: 240_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
  if (run.code !== 0) t.comment(`${run.stdout}\n${run.stderr}`);
  t.equal(run.code, 0, 'reference_clients.py exits 0 (its failed checks are in the comment above)');
  const summary = /(\d+) passed, (\d+) failed/.exec(run.stdout);
  t.ok(summary, 'the script reports its checks');
  t.equal(Number(summary?.[2]), 0, 'no failed check');
  t.ok(Number(summary?.[1]) >= 17, 'every route family was checked');
});
