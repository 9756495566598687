import t from 'tap';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeApp, tempDir } from '../helpers/app.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly');

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}

/** `redocly lint` with the repo's redocly.yaml, JSON report on stdout (it exits 1 when there are errors). */
function lint(file: string): Promise<LintReport> {
  return new Promise((done, fail) => {
    const child = spawn(
      REDOCLY,
      ['lint', file, '--format=json', '--max-problems=1000', `--config=${join(ROOT, 'redocly.yaml')}`],
      {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (err += c));
    child.on('error', fail);
    child.on('close', (code) => {
      try {
        done(JSON.parse(out) as LintReport);
      } catch {
        fail(new Error(`redocly exited ${code} without a JSON report: ${err.slice(-2000)}`));
      }
    });
  });
}

const describe = (p: LintReport['problems'][number]) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`;

t.test('the generated OpenAPI document passes redocly lint (recommended) with 0 errors', async (t) => {
  // Every built-in provider package is discovered, so every surface is in the document.
  const app = await makeApp(t);
  const res = await app.inject({ url: '/openapi.json' });
  t.equal(res.statusCode, 200);
  const dir = tempDir('sb-openapi-lint-');
  const file = join(dir, 'openapi.json');
  writeFileSync(file, res.body);

  // The same document with one operation naming a scheme that does not exist: proves the lint sees errors at all.
  const broken = res.json();
  broken.paths['/healthz'].get.security = [{ noSuchScheme: [] }];
  const brokenFile = join(dir, 'broken.json');
  writeFileSync(brokenFile, JSON.stringify(broken));

  const [report, brokenReport] = await Promise.all([lint(file), lint(brokenFile)]);
  const errors = report.problems.filter((p) => p.severity === 'error');
  t.equal(
    report.totals.errors,
    0,
    errors.length ? `lint errors:\n${errors.slice(0, 30).map(describe).join('\n')}` : 'no lint errors',
  );
  t.comment(
    `${report.totals.warnings} warnings: ${[...new Set(report.problems.map((p) => p.ruleId))].join(', ') || 'none'}`,
  );
  t.ok(
    brokenReport.problems.some((p) => p.severity === 'error' && p.ruleId === 'security-defined'),
    'an undefined security scheme is reported as an error',
  );
});
