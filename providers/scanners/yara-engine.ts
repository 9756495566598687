import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../../core/discovery.ts';
import type { Finding, Severity } from '../../core/primitives/scanners.ts';
import { revealHidden, type TargetText } from './texts.ts';

/** The part of the YARA-X binding this engine uses (imported lazily: a native module). */
interface CompiledRules {
  scan(data: Buffer): Array<{ ruleIdentifier: string; meta: Record<string, unknown> }>;
}
interface YaraBinding {
  compile(source: string): CompiledRules;
}

/** The rule pack beside this file; from the project root when the provider runs from a build. */
export function defaultRulesDir(): string {
  const here = join(dirname(fileURLToPath(import.meta.url)), 'rules');
  return existsSync(here) ? here : join(PROJECT_ROOT, 'providers', 'scanners', 'rules');
}

/** Every `.yar` file of a folder, by name, so a category is one file. */
export function readRulePack(dir: string): Array<{ file: string; source: string }> {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yar'))
    .sort()
    .map((file) => ({ file, source: readFileSync(join(dir, file), 'utf8') }));
}

let binding: Promise<YaraBinding | undefined> | undefined;

/** The YARA-X binding, or undefined when it does not load on this machine (no prebuilt binary). */
export function loadYara(): Promise<YaraBinding | undefined> {
  binding ??= import('@litko/yara-x').then(
    (m) => (m as unknown as { default?: YaraBinding }).default ?? (m as unknown as YaraBinding),
    () => undefined,
  );
  return binding;
}

const SEVERITIES = new Set<Severity>(['critical', 'high', 'medium', 'low']);

/**
 * Rules compiled once, reused for every scan. Each text is scanned as given
 * and, when it hides characters, again as the model would read it; a rule that
 * fires on the revealed text says so in its location.
 */
export class YaraEngine {
  private constructor(
    private readonly rules: CompiledRules,
    readonly ruleFiles: string[],
  ) {}

  static async compile(dir: string): Promise<YaraEngine | undefined> {
    const yara = await loadYara();
    if (!yara) return undefined;
    const pack = readRulePack(dir);
    if (pack.length === 0) throw new Error(`no .yar rule files in ${dir}`);
    // One compilation of every category: one pass over each text however many files there are.
    const rules = yara.compile(pack.map((p) => `// ${p.file}\n${p.source}`).join('\n'));
    return new YaraEngine(
      rules,
      pack.map((p) => p.file),
    );
  }

  scanTexts(texts: TargetText[], analyzer: string): Finding[] {
    const findings: Finding[] = [];
    for (const t of texts) {
      const seen = new Set<string>();
      const hidden = revealHidden(t.text);
      const passes: Array<[string, string]> = [[t.location, t.text]];
      if (hidden !== undefined) passes.push([`${t.location} (hidden text revealed)`, hidden]);
      for (const [location, text] of passes) {
        for (const m of this.rules.scan(Buffer.from(text, 'utf8'))) {
          if (seen.has(m.ruleIdentifier)) continue;
          seen.add(m.ruleIdentifier);
          const sev = String(m.meta.severity ?? 'medium') as Severity;
          findings.push({
            severity: SEVERITIES.has(sev) ? sev : 'medium',
            threat_names: [String(m.meta.category ?? 'suspicious')],
            summary: `${m.ruleIdentifier}: ${String(m.meta.summary ?? 'matched a rule')}`,
            location,
            analyzer,
          });
        }
      }
    }
    return findings;
  }
}
