import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/app.ts';
import { freePort } from '../fixtures/redis-server.ts';

const BIN = fileURLToPath(new URL('../../bin/switchboard.ts', import.meta.url));
const BROKEN = fileURLToPath(new URL('../fixtures/broken/throws', import.meta.url));

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', DATA_DIR: tempDir('sb-cli-'), ...extra };
  if (!('SWITCHBOARD_CONFIG' in extra)) delete env.SWITCHBOARD_CONFIG;
  if (!('REDIS_URL' in extra)) delete env.REDIS_URL;
  return env;
}

/** Run the CLI to completion (it is expected to exit by itself). */
function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', 'tsx', BIN, ...args], {
      env: childEnv(env),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', rej);
    child.on('exit', (code) => (clearTimeout(timer), res({ code, stderr })));
  });
}

/** Start the server and wait until /healthz answers. */
async function serve(t: Test, args: string[]): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', BIN, ...args], {
    env: childEnv({ PORT: String(port) }),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { base, child };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not answer /healthz');
}

t.test('a bad config file exits non-zero with a message naming the key', async (t) => {
  const dir = tempDir('sb-cli-conf-');
  const conf = join(dir, 'bad.yaml');
  writeFileSync(conf, 'providers:\n  memory:\n    locked: maybe\n');
  const r = await run([], { SWITCHBOARD_CONFIG: conf });
  t.equal(r.code, 1);
  t.match(r.stderr, /SB_ERR_CONFIG_INVALID: Invalid config key 'providers\.memory\.locked'/);
  t.notMatch(r.stderr, /at .*\.ts:\d+/, 'a message, not a stack trace');
});

t.test('a broken provider package in the config stops startup and is named', async (t) => {
  const dir = tempDir('sb-cli-conf-');
  const conf = join(dir, 'c.json');
  writeFileSync(conf, JSON.stringify({ provider_packages: [BROKEN] }));
  const r = await run([], { SWITCHBOARD_CONFIG: conf });
  t.equal(r.code, 1);
  t.match(r.stderr, /SB_ERR_PROVIDER_PACKAGE_INVALID: Provider package 'sb-broken-throws' is broken/);
});

t.test('a bad env value and a bad --surfaces value exit non-zero', async (t) => {
  const port = await run([], { PORT: 'eighty' });
  t.equal(port.code, 1);
  t.match(port.stderr, /PORT/);
  const redis = await run([], { REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
  t.equal(redis.code, 1, 'an unreachable Redis store stops startup');
  t.match(redis.stderr, /SB_ERR_STORE_UNAVAILABLE: Store 'redis' at redis:\/\/127\.0\.0\.1:\d+ is unavailable/);
  t.notMatch(redis.stderr, /\n\s+at /, 'without a stack trace');
  const surfaces = await run(['--surfaces', 'everything'], {});
  t.equal(surfaces.code, 2);
  t.match(surfaces.stderr, /--surfaces takes registry, platform/);
});

t.test('--surfaces registry serves the registry alone', async (t) => {
  const { base, child } = await serve(t, ['--surfaces', 'registry']);
  t.equal((await fetch(`${base}/api/servers`)).status === 404, false, 'registry routes are there');
  const platform = await fetch(`${base}/api/v1/providers`);
  t.equal(platform.status, 404, 'platform routes are not');
  t.equal(((await platform.json()) as { code: string }).code, 'SB_ERR_ROUTE_NOT_FOUND');
  t.equal((await fetch(`${base}/readyz`)).status, 200, 'ops routes on every surface');
  child.kill('SIGTERM');
  const code = await new Promise((r) => child.once('exit', r));
  t.equal(code, 0, 'SIGTERM shuts down cleanly');
});

t.test('--surfaces platform serves the platform alone', async (t) => {
  const { base } = await serve(t, ['--surfaces', 'platform']);
  const providers = await fetch(`${base}/api/v1/providers`);
  t.equal(providers.status, 200);
  t.ok(((await providers.json()) as Record<string, unknown>).memory, 'platform routes are there');
  const reg = await fetch(`${base}/api/servers`);
  t.equal(reg.status, 404, 'registry routes are not');
});

t.test('with no flags and no config both surfaces answer (npm start)', async (t) => {
  const { base } = await serve(t, []);
  t.equal((await fetch(`${base}/api/v1/providers`)).status, 200);
  t.not((await fetch(`${base}/api/servers`)).status, 404);
  const metrics = await fetch(`${base}/metrics`);
  t.match(await metrics.text(), /switchboard_http_requests_total\{method="GET",route="\/healthz",status="200"\}/);
});
