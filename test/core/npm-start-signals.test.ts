import t from 'tap';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/app.ts';
import { freePort } from '../fixtures/free-port.ts';

/**
 * `kill -TERM <npm start>` must stop Switchboard, not orphan it. Each run gets
 * a DATA_DIR of its own, so its processes (npm, a shell if any, node) are
 * found by that value in their environment, whatever their command lines.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Two `npm start` runs, each possibly rebuilding dist/: past the 300 s per-file default on a busy machine.
t.setTimeout(600_000);

function processesWith(dataDir: string): number[] {
  const needle = `\0DATA_DIR=${dataDir}\0`;
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (`\0${readFileSync(`/proc/${name}/environ`, 'latin1')}`.includes(needle)) found.push(Number(name));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
};

async function until(_what: string, fn: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} to the npm start process leaves no Switchboard process behind`, async (t) => {
    const dataDir = tempDir('sb-npm-start-');
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    };
    delete env.REDIS_URL;
    delete env.SWITCHBOARD_CONFIG;
    const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    npm.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Whatever happens, nothing of this run outlives the test.
    t.teardown(() => {
      for (const pid of processesWith(dataDir)) process.kill(pid, 'SIGKILL');
    });

    const up = await until(
      '/healthz',
      async () => {
        if (npm.exitCode !== null) return true;
        return fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      180_000,
    );
    const serving = up && npm.exitCode === null;
    t.ok(serving, `npm start answered /healthz${serving ? '' : `; exit ${npm.exitCode}, stderr: ${stderr}`}`);
    if (npm.exitCode !== null) return;

    const running = processesWith(dataDir);
    t.ok(running.includes(npm.pid!), 'the npm process is found by its DATA_DIR');
    t.ok(
      running.some((pid) => /node .*scripts\/start\.mjs/.test(commandLine(pid))),
      `the server runs as scripts/start.mjs: ${running.map(commandLine).join(' | ')}`,
    );

    const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
    npm.kill(signal);
    t.equal(await exited, 0, `npm start exited cleanly on ${signal}; stderr: ${stderr}`);
    const gone = await until('no process left', () => processesWith(dataDir).length === 0, 15_000);
    t.ok(
      gone,
      `no process of this run remains: ${processesWith(dataDir)
        .map((p) => `${p} ${commandLine(p)}`)
        .join(' | ')}`,
    );
    t.notOk(
      await fetch(`http://127.0.0.1:${port}/healthz`).then(
        () => true,
        () => false,
      ),
      'nothing answers on the port any more',
    );
  });
}
