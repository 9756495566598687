import {
  type Finding,
  type ScanResult,
  type ScanTarget,
  SEVERITY_ORDER,
  worstSeverity,
} from '../../core/primitives/scanners.ts';

/** Findings of one scanner folded into the primitive's result: worst severity, threat names, a one-line summary. */
export function resultOf(scanner: string, target: ScanTarget, findings: Finding[]): ScanResult {
  const sorted = [...findings].sort((a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity));
  const severity = worstSeverity(sorted);
  const threat_names = [...new Set(sorted.flatMap((f) => f.threat_names))];
  const summary =
    sorted.length === 0
      ? `No threats found by ${scanner}`
      : `${sorted.length} finding${sorted.length === 1 ? '' : 's'} by ${scanner}, worst ${severity}: ${sorted[0]!.summary}`;
  return {
    scanner,
    target_kind: target.kind,
    target_name: target.name,
    severity,
    is_safe: severity === 'SAFE',
    threat_names,
    summary,
    findings: sorted.map((f) => ({ ...f, analyzer: f.analyzer ?? scanner })),
    analyzed: true,
    scanned_at: new Date().toISOString(),
  };
}
