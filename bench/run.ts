import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchModule, BenchRow } from './harness.ts';

/**
 * `npm run bench`: every bench/*.bench.ts in one run, one after the other (so
 * they do not compete for the CPU), then one table on stdout and in
 * bench/RESULTS.md. BENCH_ONLY=name,name runs a subset; BENCH_DURATION sets
 * seconds per load.
 */
const DIR = fileURLToPath(new URL('.', import.meta.url));
const only = process.env.BENCH_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => !only || only.includes(f.replace(/\.bench\.ts$/, '')))
  .sort();

const rows: BenchRow[] = [];
const failures: string[] = [];
for (const f of files) {
  const name = f.replace(/\.bench\.ts$/, '');
  process.stderr.write(`bench: ${name}...\n`);
  try {
    const mod = (await import(pathToFileURL(join(DIR, f)).href)) as { default?: BenchModule };
    if (typeof mod.default !== 'function') throw new Error('no default export (a BenchModule)');
    rows.push(...(await mod.default()));
  } catch (err) {
    failures.push(`${name}: ${(err as Error).message}`);
    rows.push({ group: name, name: '(failed)', note: (err as Error).message.slice(0, 120) });
  }
}

const num = (v: number | undefined, digits: number) =>
  v === undefined || !Number.isFinite(v) ? '' : v.toFixed(digits);
const header = ['group', 'name', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'goal', 'note'];
const table = rows.map((r) => [
  r.group,
  r.name,
  num(r.rps, 0),
  num(r.p50_ms, 2),
  num(r.p99_ms, 2),
  r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`,
  r.goal ?? '',
  r.note ?? '',
]);

function markdown(): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...table.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

function plain(): string {
  const all = [header, ...table];
  const widths = header.map((_, i) => Math.min(70, Math.max(...all.map((r) => r[i].length))));
  const line = (r: string[]) =>
    r.map((c, i) => (c.length > widths[i] ? `${c.slice(0, widths[i] - 1)}…` : c.padEnd(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...table.map(line)].join('\n');
}

const machine = `${availableParallelism()} CPUs (nproc) · ${cpus()[0]?.model?.trim() ?? 'unknown CPU'} · Node ${process.version} · ${process.platform}/${process.arch}`;
const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const duration = process.env.BENCH_DURATION ?? 'default (5)';

console.log(plain());
console.log(`\n${date} · ${machine} · load duration ${duration} s per row`);

/** A hand-written "## Notes" section of the previous RESULTS.md is kept across runs. */
function previousNotes(file: string): string {
  if (!existsSync(file)) return '';
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf('\n## Notes');
  return at < 0 ? '' : text.slice(at);
}

if (!only) {
  const file = join(DIR, 'RESULTS.md');
  const notes = previousNotes(file);
  writeFileSync(
    file,
    `# Benchmark results

Written by \`npm run bench\` (bench/run.ts): edit only the "Notes" section, which is kept across runs. Ratios compare rows with the first row of their
group, measured in the same run. Servers under test run in child processes; autocannon runs in the parent.

- Date: ${date}
- Machine: ${machine}
- Load duration: ${duration} s per row (BENCH_DURATION), 10 connections

${markdown()}
${failures.length ? `\nFailed bench modules:\n\n${failures.map((f) => `- ${f}`).join('\n')}\n` : ''}${notes}`,
  );
  console.log('bench/RESULTS.md rewritten');
} else if (rows.length && !failures.length) {
  mergeIntoResults(join(DIR, 'RESULTS.md'));
}

/**
 * A BENCH_ONLY run replaces the rows of the groups it measured and keeps every other row, so one area can be
 * re-measured without an hour-long full run; the header records which modules were updated and when.
 */
function mergeIntoResults(file: string): void {
  if (!existsSync(file)) return;
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const first = lines.findIndex((l) => /^\|\s*group\s*\|/.test(l));
  if (first < 0) return;
  let end = first + 2;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  const groups = new Set(rows.map((r) => r.group));
  // The group cell, with any padding a Markdown formatter added.
  const cell = (line: string) =>
    line
      .split(' | ')[0]!
      .replace(/^\|\s*/, '')
      .trim()
      .replace(/\\\|/g, '|');
  const kept = lines.slice(first + 2, end).filter((l) => !groups.has(cell(l)));
  const fresh = markdown().split('\n').slice(2);
  const body = [...kept, ...fresh].sort((a, b) => cell(a).localeCompare(cell(b)));
  const stamp = `- Partial run (BENCH_ONLY=${only!.join(',')}): ${date}`;
  const head = lines.slice(0, first).filter((l) => !l.startsWith(`- Partial run (BENCH_ONLY=${only!.join(',')})`));
  const at = head.findIndex((l) => l.startsWith('- Load duration'));
  head.splice(at < 0 ? head.length : at + 1, 0, stamp);
  writeFileSync(file, [...head, ...lines.slice(first, first + 2), ...body, ...lines.slice(end)].join('\n'));
  console.log(`bench/RESULTS.md: rows of ${[...groups].join(', ')} replaced`);
}
if (failures.length) {
  console.error(`bench: ${failures.length} module(s) failed:\n${failures.join('\n')}`);
  process.exitCode = 1;
}
