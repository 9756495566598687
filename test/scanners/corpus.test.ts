import { readFileSync } from 'node:fs';
import t from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import type { ScannerProvider, ScanTarget } from '../../core/primitives/scanners.ts';
import { specScanner } from '../../providers/scanners/spec.ts';
import { staticScanner } from '../../providers/scanners/static.ts';
import { yaraScanner } from '../../providers/scanners/yara.ts';

type Item = ScanTarget & { category: string; note: string };
const load = (f: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/scanning/${f}`, import.meta.url), 'utf8')) as Item[];

/**
 * Recall and false positives of the registry's default analyzers per kind
 * (servers: yara; agents: yara + spec; skills: static), over the written
 * corpus. Detected = a critical or high finding (spec 4.10.2: unsafe).
 */
t.test('corpus: recall on malicious >= 0.95, false positives on benign <= 0.05', async (t) => {
  const ctx = {} as ProviderContext;
  const yara = (await yaraScanner.create('yara', {}, ctx)) as ScannerProvider;
  const spec = (await specScanner.create('spec', {}, ctx)) as ScannerProvider;
  const stat = (await staticScanner.create('static', {}, ctx)) as ScannerProvider;
  const defaults: Record<string, ScannerProvider[]> = { server: [yara], agent: [yara, spec], skill: [stat] };
  const unsafe = async (item: Item) => {
    const results = await Promise.all(defaults[item.kind]!.map((p) => p.scan(item)));
    const hits = results.flatMap((r) => r.findings).filter((f) => f.severity === 'critical' || f.severity === 'high');
    return { flagged: hits.length > 0, why: hits.map((f) => `${f.analyzer}: ${f.summary}`) };
  };
  const malicious = load('malicious.json');
  const benign = load('benign.json');
  t.ok(malicious.length >= 20 && benign.length >= 20, 'at least 20 of each');
  const cats = new Map<string, number>();
  for (const m of malicious) cats.set(m.category, (cats.get(m.category) ?? 0) + 1);
  const exfil = (cats.get('data_exfiltration') ?? 0) + (cats.get('credential_harvesting') ?? 0);
  for (const c of ['prompt_injection', 'command_injection', 'tool_shadowing', 'obfuscated_payload'])
    t.ok((cats.get(c) ?? 0) >= 2, `${c} at least twice`);
  t.ok(exfil >= 2, 'credential and data exfiltration at least twice');
  t.ok(malicious.filter((m) => /[\u{E0000}-\u{E007F}]/u.test(JSON.stringify(m))).length >= 2, 'Unicode-tag items');

  let caught = 0;
  for (const m of malicious) {
    const r = await unsafe(m);
    if (r.flagged) caught++;
    else t.comment(`MISSED ${m.kind} ${m.name} (${m.category}): ${m.note}`);
  }
  let falsePositives = 0;
  for (const b of benign) {
    const r = await unsafe(b);
    if (r.flagged) {
      falsePositives++;
      t.comment(`FALSE POSITIVE ${b.kind} ${b.name}: ${r.why.join(' | ')}`);
    }
  }
  const recall = caught / malicious.length;
  const fpr = falsePositives / benign.length;
  const line = `scanning corpus: recall ${recall.toFixed(3)} (${caught}/${malicious.length}), false-positive rate ${fpr.toFixed(3)} (${falsePositives}/${benign.length})`;
  console.log(line);
  t.comment(line);
  t.ok(recall >= 0.95, `recall ${recall.toFixed(3)} >= 0.95`);
  t.ok(fpr <= 0.05, `false-positive rate ${fpr.toFixed(3)} <= 0.05`);
});
