import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Servers under a benchmark run in child processes, so they never share an event loop with the load generator. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

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
  stop(): void;
}

const stopper = (child: ChildProcess) => () => {
  if (child.exitCode === null) child.kill('SIGTERM');
};

/** Switchboard from bin/switchboard.ts with a config object (written to a temp file), on a free port. */
export async function startSwitchboard(config: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Spawned> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bin/switchboard.ts')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn', REDIS_URL: '', SWITCHBOARD_CONFIG: file, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(`${base}/healthz`, child);
  return { base, child, stop: stopper(child) };
}

/** A TypeScript module body run with tsx in a child; it must listen on process.env.PORT and answer `healthPath`. */
export async function startScript(source: string, healthPath: string, env: Record<string, string> = {}): Promise<Spawned> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-script-'));
  // Inside the project so its imports resolve; removed once the child is gone (and git-ignored meanwhile).
  const file = join(ROOT, 'bench', `.tmp-${port}.mts`);
  writeFileSync(file, source);
  const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: { ...process.env, PORT: String(port), BENCH_DIR: dir, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  child.once('exit', () => rmSync(file, { force: true }));
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(`${base}${healthPath}`, child);
  return { base, child, stop: stopper(child) };
}
