import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

/** Registry item kinds a scanner can look at. */
export const ScanTargetKind = Type.Union([Type.Literal('server'), Type.Literal('agent'), Type.Literal('skill')]);
export type ScanTargetKind = Static<typeof ScanTargetKind>;

/**
 * What the registry hands a scanner: the text a user or model would read.
 * Servers bring their tools; agents their card; skills their SKILL.md and files.
 */
export const ScanTarget = Type.Object({
  kind: ScanTargetKind,
  /** Registry path or name of the item, used in findings and logs. */
  name: Type.String({ minLength: 1 }),
  tools: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String(),
        description: Type.Optional(Type.String()),
        input_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      }),
    ),
  ),
  card: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  skill_md: Type.Optional(Type.String()),
  /** Other files of a skill, path -> text. */
  files: Type.Optional(Type.Record(Type.String(), Type.String())),
});
export type ScanTarget = Static<typeof ScanTarget>;

/** `SAFE` is the severity of a clean result, so one field sorts every outcome. */
export const Severity = Type.Union([
  Type.Literal('critical'),
  Type.Literal('high'),
  Type.Literal('medium'),
  Type.Literal('low'),
  Type.Literal('SAFE'),
]);
export type Severity = Static<typeof Severity>;

/** Severity order, worst first, for picking a result's overall severity. */
export const SEVERITY_ORDER: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'SAFE'];

export const Finding = Type.Object({
  severity: Severity,
  /** Threat categories, e.g. `prompt_injection`, `tool_poisoning`, `credential_harvesting`. */
  threat_names: Type.Array(Type.String()),
  summary: Type.String(),
  /** Where it was found, e.g. `tools/search.description` or `SKILL.md:12`. */
  location: Type.Optional(Type.String()),
  analyzer: Type.Optional(Type.String()),
});
export type Finding = Static<typeof Finding>;

export const ScanResult = Type.Object({
  scanner: Type.String({ description: 'Provider instance that ran the scan' }),
  target_kind: ScanTargetKind,
  target_name: Type.String(),
  /** Worst severity of the findings; `SAFE` when there are none. */
  severity: Severity,
  is_safe: Type.Boolean(),
  threat_names: Type.Array(Type.String()),
  summary: Type.String(),
  findings: Type.Array(Finding),
  /** False when the scanner looked at nothing (the noop scanner): the registry must not call the item vetted. */
  analyzed: Type.Boolean(),
  scanned_at: Type.String({ format: 'date-time' }),
});
export type ScanResult = Static<typeof ScanResult>;

export interface ScannersCapabilities {
  /** Target kinds the scanner understands. */
  targets: readonly ScanTargetKind[];
  /** True when the scanner really inspects content (false for noop). */
  analyzes: boolean;
  [k: string]: boolean | string | readonly string[];
}

/**
 * A registry security scanner (kind `scanners`, not routed per request). A scan
 * that cannot run throws; the registry records `scan_failed` and follows its
 * setting (ANCHOR-FACTS), it never treats a throw as safe.
 */
export interface ScannerProvider extends ProviderBase {
  readonly kind: 'scanners';
  readonly capabilities: ScannersCapabilities;
  scan(target: ScanTarget): Promise<ScanResult>;
}

/** The worst severity of a list of findings (`SAFE` for none). */
export function worstSeverity(findings: readonly Pick<Finding, 'severity'>[]): Severity {
  let worst = SEVERITY_ORDER.length - 1;
  for (const f of findings) worst = Math.min(worst, SEVERITY_ORDER.indexOf(f.severity));
  return SEVERITY_ORDER[worst]!;
}
