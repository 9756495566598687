import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { tempDir } from '../helpers/app.ts';
import { logFormat } from '../../plugins/ops/logging.ts';

/** What `npm start` prints: a banner and pretty logs at a terminal, JSON lines otherwise; new keys are named. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = ['--import', 'tsx', 'bin/switchboard.ts'];

async function runUntil(cmd: string, args: string[], env: NodeJS.ProcessEnv, done: RegExp): Promise<string> {
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const ok = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 120_000);
    const check = () => done.test(out) && (clearTimeout(timer), resolve(true));
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.once('exit', () => (clearTimeout(timer), resolve(done.test(out))));
  });
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
  if (!ok) throw new Error(`never printed ${done}: ${out}`);
  return out;
}

const baseEnv = (dataDir: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' };
  for (const k of ['LOG_FORMAT', 'SWITCHBOARD_CONFIG', 'REDIS_URL', 'ADMIN_PASSWORD', 'ENCRYPTION_KEY', 'SECRET_KEY'])
    delete env[k];
  return env;
};

// One DATA_DIR for both starts: the first generates the keys and names them, the second (at a terminal) finds
// them and must not claim to have generated them. Two server starts only: this machine may be busy.
const dir = tempDir('sb-startlog-');

t.test('not a terminal: JSON lines, no banner, and the first start names data/encryption_key', async (t) => {
  const out = await runUntil(process.execPath, BIN, baseEnv(dir), /switchboard ready/);
  const lines = out.split('\n').filter((l) => l.trim());
  t.ok(
    lines.every((l) => l.startsWith('{')),
    'every line is JSON',
  );
  const named = lines.map((l) => JSON.parse(l)).find((l) => l.file === `${dir}/encryption_key`);
  t.ok(named, 'a log line names the generated encryption_key file');
  t.match(named?.msg, /Generated ENCRYPTION_KEY/);
  t.notMatch(out, /Switchboard is ready at/, 'no banner');
});

t.test('at a terminal: pretty logs through pino-pretty and the banner', async (t) => {
  // script(1) gives the server a pseudo-terminal as stdout.
  const cmd = [process.execPath, ...BIN].map((a) => `'${a}'`).join(' ');
  const out = await runUntil('script', ['-qec', cmd, '/dev/null'], baseEnv(dir), /Ctrl-C to stop/);
  t.notMatch(out, /\{"level":/, 'no JSON lines');
  t.match(out, /INFO.*switchboard ready/, 'pino-pretty lines');
  for (const want of [
    /Console\s+http:\/\/127\.0\.0\.1:\d+\//,
    /API docs\s+http:.*\/docs/,
    /Registry\s+http:.*\/api\//,
    /Platform\s+http:.*\/api\/v1/,
    /password in .*admin_password/,
    /Store\s+sqlite/,
    /Providers\s+.*memory=in_memory/,
  ]) {
    t.match(out, want, `banner: ${want}`);
  }
  t.notMatch(out, /Generated ENCRYPTION_KEY/, 'a later start does not claim to have generated the key');
  t.notMatch(out, new RegExp(readFileSync(`${dir}/admin_password`, 'utf8').trim()), 'never the password itself');
});

t.test('LOG_FORMAT: json or pretty, pretty by default only on a terminal; anything else stops the start', async (t) => {
  t.equal(logFormat({}, true), 'pretty');
  t.equal(logFormat({}, false), 'json');
  t.equal(logFormat({ LOG_FORMAT: 'json' }, true), 'json', 'JSON at a terminal when asked');
  t.equal(logFormat({ LOG_FORMAT: 'pretty' }, false), 'pretty');
  t.throws(
    () => logFormat({ LOG_FORMAT: 'fancy' }, true),
    /Invalid environment variable LOG_FORMAT: 'fancy' is not one of json, pretty/,
  );
});
