import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/app.ts';
import { freePort } from '../fixtures/free-port.ts';

/**
 * Every ```sh and ```bash block of README.md and docs/*.md, run as a reader would paste it, against a live
 * Switchboard started with `npm start`'s own script on a free port.
 *
 * Where the blocks run: a temp folder that looks like the checkout (every top-level entry is a symlink to the
 * real one) except for `data/`, which is empty and is the server's DATA_DIR, so `cat data/admin_password`,
 * `npm start` and `./examples/...` work unchanged.
 *
 * The only substitutions, made on the block text:
 *   - port 7860 (the default server) -> the test server's free port;
 *   - port 7861 (a second server some examples start) and 3001 (the reference MCP server) -> other free ports.
 *
 * The marker: a block right after the line `<!-- shell-blocks: skip (reason) -->` is not run. It is for blocks
 * that install, run the test suite or benchmarks, or start servers in the foreground; keep it rare.
 *
 * The blocks of one file run in order in one `bash` with `set -euo pipefail`, so a later block sees the
 * variables of an earlier one, an unset variable or a failing command (curl cannot connect, say) fails the
 * file. Each file gets its own process group, stopped by its id afterwards (background servers included).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// One server, a second one from an example, an MCP server and a build: far past the 300 s per-file default on a
// busy shared machine. The root test tells the runner its own timeout.
t.setTimeout(900_000);
const SKIP = /<!--\s*shell-blocks:\s*skip\b[^>]*-->\s*$/;

interface Block {
  line: number;
  text: string;
}

function shellBlocks(file: string): { run: Block[]; skipped: Block[] } {
  const lines = readFileSync(file, 'utf8').split('\n');
  const run: Block[] = [];
  const skipped: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s*$/.test(lines[i])) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${file}:${i + 1}: unclosed code block`);
    const block = { line: i + 1, text: lines.slice(i + 1, end).join('\n') };
    (i > 0 && SKIP.test(lines[i - 1]) ? skipped : run).push(block);
    i = end;
  }
  return { run, skipped };
}

const files = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

async function until(fn: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
  return true;
}

/** Stop a detached child's whole process group by its id: TERM, then KILL what is left. */
async function stopGroup(child: ChildProcess): Promise<void> {
  const pgid = child.pid!;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pgid, s);
      return true;
    } catch {
      return false; // the group is gone
    }
  };
  if (!signal('SIGTERM')) return;
  await until(async () => !signal(0 as unknown as NodeJS.Signals), 10_000);
  signal('SIGKILL');
}

t.test('every shell block of the README and docs/ runs as pasted against a live server', async (t) => {
  const work = tempDir('sb-shell-blocks-');
  for (const entry of readdirSync(ROOT)) {
    if (entry === 'data' || entry === '.git') continue;
    symlinkSync(join(ROOT, entry), join(work, entry));
  }
  mkdirSync(join(work, 'data'));
  const [port, port2, mcpPort] = [await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
  for (const k of [
    'DATA_DIR',
    'PORT',
    'HOST',
    'SWITCHBOARD_CONFIG',
    'REDIS_URL',
    'ADMIN_PASSWORD',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'ANTHROPIC_API_KEY',
  ])
    delete env[k];

  const server = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs')], {
    cwd: work,
    env: { ...env, PORT: String(port) },
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let serverErr = '';
  server.stderr!.on('data', (d: Buffer) => (serverErr += d.toString()));
  t.teardown(() => stopGroup(server));
  const up = await until(
    async () =>
      server.exitCode === null &&
      (await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      )),
    180_000,
  );
  t.ok(up, `the server is up${up ? '' : `: ${serverErr}`}`);
  if (!up) return;

  const substitute = (text: string) =>
    text
      .replace(/\b7860\b/g, String(port))
      .replace(/\b7861\b/g, String(port2))
      .replace(/\b3001\b/g, String(mcpPort));

  let ran = 0;
  for (const file of files) {
    const { run, skipped } = shellBlocks(join(ROOT, file));
    ran += run.length;
    if (run.length === 0) continue;
    await t.test(`${file}: ${run.length} block(s) run, ${skipped.length} marked skip`, async (t) => {
      const script = [
        'set -euo pipefail',
        ...run.map((b) => `echo "### ${file}:${b.line}" >&2\n${substitute(b.text)}`),
      ].join('\n');
      const sh = spawn('bash', ['-c', script], { cwd: work, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      sh.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      sh.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      // 'exit', not 'close': a background server started by a block keeps the pipes open until it is stopped.
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => resolve(null), 240_000);
        sh.once('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      await stopGroup(sh);
      t.equal(code, 0, `the blocks of ${file} ran without error (exit ${code}); output:\n${out.slice(-4000)}`);
    });
  }
  t.ok(ran >= 8, `found the shell blocks (${ran} run)`);
});
