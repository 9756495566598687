import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/fixtures/free-port.ts';

/** Servers under a benchmark run in child processes, so they never share an event loop with the load generator. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export { freePort };

export async function waitHealthy(url: string, child: ChildProcess, stepMs = 10, tries = 3000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (child.exitCode !== null) throw new Error(`bench server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`${url} did not answer`);
}

export interface Spawned {
  base: string;
  child: ChildProcess;
  /** SIGTERM at once; resolves when the child is gone (SIGKILL after 5 s), so the next server does not start beside it. */
  stop(): Promise<void>;
}

/** SIGTERM, then SIGKILL after 5 s; resolves when the child is gone. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(timer);
}

const stopper = (child: ChildProcess) => () => stopChild(child);

/** Waits for `healthUrl`; a child that never answers is killed rather than left running after the bench fails. */
async function healthyOrKilled(healthUrl: string, child: ChildProcess): Promise<void> {
  try {
    await waitHealthy(healthUrl, child);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

export interface SwitchboardOptions {
  /** Extra command-line arguments, e.g. ['--surfaces', 'platform']. */
  args?: string[];
  /** DATA_DIR for a bench that seeds the store before the server starts; default: a fresh temp folder. */
  dataDir?: string;
}

let built = false;
/**
 * Benches measure Switchboard the way `npm start` runs it: node on the esbuild
 * bundle in dist/ (not TypeScript through tsx, whose loader and per-closure
 * name helpers showed in request profiles). Built once per bench run.
 */
export function buildOnce(): string {
  if (!built) {
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    built = true;
  }
  return join(ROOT, 'dist/switchboard.js');
}

/** Switchboard (the built bundle, as `npm start` runs it) with a config object (written to a temp file), on a free port. */
export async function startSwitchboard(
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
  opts: SwitchboardOptions = {},
): Promise<Spawned> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  // BENCH_PROFILE_DIR: each Switchboard under a bench writes a V8 CPU profile there when it stops (to find what a row spends).
  const profile = process.env.BENCH_PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
    : [];
  const child = spawn(process.execPath, [...profile, buildOnce(), ...(opts.args ?? [])], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: opts.dataDir ?? dir,
      LOG_LEVEL: 'warn',
      REDIS_URL: '',
      SWITCHBOARD_CONFIG: file,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await healthyOrKilled(`${base}/healthz`, child);
  return { base, child, stop: stopper(child) };
}

/** A TypeScript module body run with tsx in a child; it must listen on process.env.PORT and answer `healthPath`. */
export async function startScript(
  source: string,
  healthPath: string,
  env: Record<string, string> = {},
): Promise<Spawned> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-script-'));
  // Inside the project so its imports resolve; removed once the child is gone (and git-ignored meanwhile).
  const file = join(ROOT, 'bench', `.tmp-${port}.mts`);
  writeFileSync(file, source);
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), BENCH_DIR: dir, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.once('exit', () => rmSync(file, { force: true }));
  const base = `http://127.0.0.1:${port}`;
  await healthyOrKilled(`${base}${healthPath}`, child);
  return { base, child, stop: stopper(child) };
}
