import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { progressFor } from './scan-progress.ts';

/**
 * `switchboard scan`: the periodic scan of spec 4.10.1 through the registry's
 * own API. Every enabled server, agent and skill is rescanned (an admin token
 * is needed: rescans are admin-only), its summary and stored report are
 * written to the output folder, and a summary table is printed.
 * Exit codes: 0 all safe, 1 something unsafe, 2 a scan or request failed
 * (and nothing unsafe), 64 bad usage.
 */

const USAGE = `switchboard scan --base-url URL --output DIR [--analyzers yara,llm] [--token TOKEN]
                 [--kinds servers,agents,skills] [--concurrency 4]

Rescans every enabled server, agent and skill of a registry through its API and writes
one JSON report per item plus summary.json. The token (or SWITCHBOARD_TOKEN) must be an
admin's. Exit 1 when an item is unsafe, 2 when a scan failed.`;

type Kind = 'server' | 'agent' | 'skill';
interface Item {
  kind: Kind;
  path: string;
  /** URL part of the item for /rescan and /security-scan. */
  ref: string;
}
interface Row {
  kind: Kind;
  path: string;
  status: string;
  critical: number;
  high: number;
  medium: number;
  low: number;
  analyzers: string;
  error?: string;
}

const PLURAL: Record<Kind, string> = { server: 'servers', agent: 'agents', skill: 'skills' };

class Api {
  constructor(
    private readonly base: string,
    private readonly token: string | undefined,
  ) {}

  async call(method: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: this.token ? { authorization: `Bearer ${this.token}` } : {},
    });
    const text = await res.text();
    let body: Record<string, unknown>;
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      body = { detail: text.slice(0, 200) };
    }
    return { status: res.status, body };
  }

  async json(path: string): Promise<Record<string, unknown>> {
    const r = await this.call('GET', path);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${String(r.body.detail ?? '')}`);
    return r.body;
  }
}

async function listItems(api: Api, kinds: Kind[]): Promise<Item[]> {
  const out: Item[] = [];
  if (kinds.includes('server')) {
    const { servers } = (await api.json('/api/servers')) as { servers: Array<{ path: string; is_enabled: boolean }> };
    for (const s of servers)
      if (s.is_enabled) out.push({ kind: 'server', path: s.path, ref: encodeURIComponent(s.path.slice(1)) });
  }
  if (kinds.includes('agent')) {
    const { agents } = (await api.json('/api/agents?enabled_only=true')) as { agents: Array<{ path: string }> };
    for (const a of agents) out.push({ kind: 'agent', path: a.path, ref: encodeURIComponent(a.path.slice(1)) });
  }
  if (kinds.includes('skill')) {
    for (let offset = 0; ; offset += 500) {
      const page = (await api.json(`/api/skills?enabled_only=true&limit=500&offset=${offset}`)) as {
        skills: Array<{ path: string; name: string }>;
        total: number;
      };
      for (const k of page.skills) out.push({ kind: 'skill', path: k.path, ref: encodeURIComponent(k.name) });
      if (page.skills.length === 0 || offset + page.skills.length >= page.total) break;
    }
  }
  return out;
}

const fileName = (path: string) => path.replace(/^\/+/, '').replace(/[^A-Za-z0-9._-]/g, '_') || '_';

async function scanOne(api: Api, item: Item, analyzers: string | undefined, outDir: string): Promise<Row> {
  const q = analyzers ? `?analyzers=${encodeURIComponent(analyzers)}` : '';
  const base = `/api/${PLURAL[item.kind]}/${item.ref}`;
  const row: Row = {
    kind: item.kind,
    path: item.path,
    status: 'ERROR',
    critical: 0,
    high: 0,
    medium: 0,
    low: 0,
    analyzers: '',
  };
  try {
    const r = await api.call('POST', `${base}/rescan${q}`);
    if (r.status !== 200) throw new Error(`rescan answered ${r.status}: ${String(r.body.detail ?? '')}`);
    const s = r.body as Record<string, unknown> & { analyzers_used: string[] };
    const report = await api.call('GET', `${base}/security-scan`);
    Object.assign(row, {
      status: String(s.status),
      critical: Number(s.critical),
      high: Number(s.high),
      medium: Number(s.medium),
      low: Number(s.low),
      analyzers: s.analyzers_used.join(','),
    });
    writeFileSync(
      join(outDir, PLURAL[item.kind], `${fileName(item.path)}.json`),
      `${JSON.stringify({ summary: s, report: report.status === 200 ? report.body : null }, null, 2)}\n`,
    );
  } catch (err) {
    row.error = (err as Error).message;
  }
  return row;
}

export function summaryTable(rows: Row[]): string {
  const head = ['KIND', 'PATH', 'STATUS', 'CRIT', 'HIGH', 'MED', 'LOW', 'ANALYZERS'];
  const cells = rows.map((r) =>
    [r.kind, r.path, r.status, r.critical, r.high, r.medium, r.low, r.analyzers].map(String),
  );
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const fmt = (c: string[]) =>
    c
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const count = (st: string) => rows.filter((r) => r.status === st).length;
  return [
    fmt(head),
    ...cells.map(fmt),
    '',
    `${rows.length} scanned: ${count('SAFE')} safe, ${count('UNSAFE')} unsafe, ${count('SCAN_FAILED')} scan failed, ${count('ERROR')} errors`,
  ].join('\n');
}

export async function runScanCli(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'base-url': { type: 'string' },
        analyzers: { type: 'string' },
        output: { type: 'string' },
        token: { type: 'string' },
        kinds: { type: 'string' },
        concurrency: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
    }));
  } catch (err) {
    console.error(`switchboard scan: ${(err as Error).message}\n\n${USAGE}`);
    return 64;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const baseUrl = (values['base-url'] as string | undefined)?.replace(/\/+$/, '');
  const output = values.output as string | undefined;
  if (!baseUrl || !output) {
    console.error(`switchboard scan: --base-url and --output are required\n\n${USAGE}`);
    return 64;
  }
  const kinds = ((values.kinds as string | undefined) ?? 'servers,agents,skills')
    .split(',')
    .map((k) => k.trim().replace(/s$/, ''))
    .filter(Boolean) as Kind[];
  const bad = kinds.find((k) => !(k in PLURAL));
  if (bad) {
    console.error(`switchboard scan: --kinds takes servers, agents and skills; got '${bad}'`);
    return 64;
  }
  const concurrency = Number(values.concurrency ?? 4);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    console.error('switchboard scan: --concurrency must be a whole number >= 1');
    return 64;
  }
  const api = new Api(baseUrl, (values.token as string | undefined) ?? process.env.SWITCHBOARD_TOKEN);
  let items: Item[];
  try {
    items = await listItems(api, kinds);
  } catch (err) {
    console.error(`switchboard scan: cannot list the registry's items: ${(err as Error).message}`);
    return 2;
  }
  for (const k of kinds) mkdirSync(join(output, PLURAL[k]), { recursive: true });
  const progress = progressFor(process.stderr);
  progress.start(items.length);
  const rows: Row[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      const row = await scanOne(api, item, values.analyzers as string | undefined, output);
      rows.push(row);
      const outcome = row.error ? `ERROR ${row.error}` : `${row.status} (${row.critical} critical, ${row.high} high)`;
      progress.item(rows.length, `${item.kind} ${item.path}`, outcome);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  progress.end();
  rows.sort((a, b) => a.kind.localeCompare(b.kind) || a.path.localeCompare(b.path));
  const table = summaryTable(rows);
  writeFileSync(
    join(output, 'summary.json'),
    `${JSON.stringify({ base_url: baseUrl, scanned_at: new Date().toISOString(), items: rows }, null, 2)}\n`,
  );
  console.log(table);
  for (const r of rows.filter((x) => x.error)) console.error(`${r.kind} ${r.path}: ${r.error}`);
  if (rows.some((r) => r.status === 'UNSAFE')) return 1;
  if (rows.some((r) => r.error || r.status === 'SCAN_FAILED')) return 2;
  return 0;
}
