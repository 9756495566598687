import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

/**
 * CI starts with `npm ci`, which refuses a lockfile that does not list every
 * dependency package.json implies, including optional platform binaries that
 * were never published (@litko/yara-x names darwin builds the registry lacks;
 * `npm install` writes the lock without them and `npm ci` then fails at once).
 * Sessions run on an installed tree and never see that, so the check lives
 * here: a dry-run clean install from the lock alone, offline, in a scratch dir.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

t.test('npm ci accepts package.json and package-lock.json as committed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, f), join(dir, f));
  const run = promisify(execFile);
  const result = await run('npm', ['ci', '--dry-run', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], {
    cwd: dir,
    env: { ...process.env, npm_config_loglevel: 'error' },
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    () => ({ ok: true, out: '' }),
    (err: { stderr?: string; stdout?: string }) => ({ ok: false, out: `${err.stderr ?? ''}${err.stdout ?? ''}` }),
  );
  const missing = result.out
    .split('\n')
    .filter((l) => /Missing:|Invalid:|in sync/.test(l))
    .join('\n');
  t.ok(result.ok, `npm ci refuses the lockfile:\n${missing || result.out.slice(0, 2000)}`);
});
