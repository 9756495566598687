import type { Finding, Severity } from '../../../core/primitives/scanners.ts';
import { worstSeverity } from '../../../core/primitives/scanners.ts';
import type { AgentRecord, ServerRecord, SkillRecord } from '../catalog/records.ts';
import type { AnalyzerOutcome } from './analyzers.ts';
import type { Subject } from './settings.ts';

export interface Counts {
  critical: number;
  high: number;
  medium: number;
  low: number;
}

/** The rescan summary of spec 2.6, returned by registration and rescan; `status` is never SAFE for a failed scan. */
export interface ScanSummary extends Counts {
  path: string;
  kind: Subject;
  status: 'SAFE' | 'UNSAFE' | 'SCAN_FAILED';
  is_safe: boolean;
  scan_failed: boolean;
  scan_timestamp: string;
  analyzers_used: string[];
  /** Why the scan failed, one line per analyzer that did. */
  errors?: string[];
  /** Set when this scan disabled the item. */
  blocked?: boolean;
}

export const allFindings = (outcomes: AnalyzerOutcome[]): Finding[] =>
  outcomes.flatMap((o) => (o.ok ? o.result.findings.map((f) => ({ ...f, analyzer: f.analyzer ?? o.analyzer })) : []));

export function countOf(findings: readonly Finding[]): Counts {
  const c: Counts = { critical: 0, high: 0, medium: 0, low: 0 };
  for (const f of findings) if (f.severity !== 'SAFE') c[f.severity]++;
  return c;
}

export function summarize(kind: Subject, path: string, outcomes: AnalyzerOutcome[], at: string): ScanSummary {
  const counts = countOf(allFindings(outcomes));
  const errors = outcomes.filter((o) => !o.ok).map((o) => (o.ok ? '' : o.error));
  const failed = errors.length > 0;
  const unsafe = counts.critical + counts.high > 0;
  return {
    path,
    kind,
    status: unsafe ? 'UNSAFE' : failed ? 'SCAN_FAILED' : 'SAFE',
    is_safe: !unsafe && !failed,
    scan_failed: failed,
    scan_timestamp: at,
    analyzers_used: outcomes.map((o) => o.analyzer),
    ...counts,
    ...(failed ? { errors } : {}),
  };
}

/** A tool's findings folded for one analyzer (spec 2.6 tool_results[].findings map). */
function foldTool(findings: Finding[]) {
  const severity: Severity = worstSeverity(findings);
  return {
    severity,
    threat_names: [...new Set(findings.flatMap((f) => f.threat_names))],
    threat_summary: findings.length ? findings.map((f) => f.summary).join('; ') : 'No threats found',
    total_findings: findings.length,
  };
}

const toolOf = (f: Finding) => /^tools\/([^ ]+)/.exec(f.location ?? '')?.[1] ?? '';

/** The server scan file of spec 2.6: per-analyzer findings per tool, and per-tool results across analyzers. */
export function serverReport(
  s: ServerRecord,
  tools: ServerRecord['tools'],
  outcomes: AnalyzerOutcome[],
  summary: ScanSummary,
) {
  const analysis_results: Record<string, unknown> = {};
  for (const o of outcomes) {
    if (!o.ok) {
      analysis_results[o.analyzer] = { error: o.error, findings: [] };
      continue;
    }
    const perTool = tools.map((t) => {
      const own = o.result.findings.filter((f) => toolOf(f) === t.name);
      const folded = foldTool(own);
      return {
        tool_name: t.name,
        severity: folded.severity,
        threat_names: folded.threat_names,
        threat_summary: folded.threat_summary,
        is_safe: folded.severity === 'SAFE' || folded.severity === 'low' || folded.severity === 'medium',
        findings: own,
      };
    });
    const other = o.result.findings.filter((f) => !toolOf(f));
    analysis_results[o.analyzer] = { findings: perTool, other_findings: other, summary: o.result.summary };
  }
  const tool_results = tools.map((t) => {
    const findings: Record<string, ReturnType<typeof foldTool>> = {};
    for (const o of outcomes)
      if (o.ok) findings[o.analyzer] = foldTool(o.result.findings.filter((f) => toolOf(f) === t.name));
    const worst = worstSeverity(Object.values(findings));
    return {
      tool_name: t.name,
      tool_description: t.description ?? '',
      status: outcomes.every((o) => o.ok) ? 'completed' : 'failed',
      is_safe: worst !== 'critical' && worst !== 'high',
      findings,
    };
  });
  return {
    server_path: s.path,
    server_url: s.proxy_pass_url,
    scan_timestamp: summary.scan_timestamp,
    is_safe: summary.is_safe,
    status: summary.status,
    scan_failed: summary.scan_failed,
    ...(summary.errors ? { errors: summary.errors } : {}),
    analyzers_used: summary.analyzers_used,
    critical_issues: summary.critical,
    high_severity: summary.high,
    medium_severity: summary.medium,
    low_severity: summary.low,
    num_tools: tools.length,
    analysis_results,
    tool_results,
  };
}

/** The agent scan file of spec 2.6 (`analysis_results` + `scan_results`). */
export function agentReport(a: AgentRecord, outcomes: AnalyzerOutcome[], summary: ScanSummary) {
  const findings = allFindings(outcomes);
  return {
    agent_path: a.path,
    scan_timestamp: summary.scan_timestamp,
    is_safe: summary.is_safe,
    scan_failed: summary.scan_failed,
    ...(summary.errors ? { errors: summary.errors } : {}),
    critical_issues: summary.critical,
    high_severity: summary.high,
    medium_severity: summary.medium,
    low_severity: summary.low,
    analyzers_used: summary.analyzers_used,
    analysis_results: Object.fromEntries(
      outcomes.map((o) => [
        o.analyzer,
        o.ok
          ? { severity: o.result.severity, summary: o.result.summary, findings: o.result.findings }
          : { error: o.error, findings: [] },
      ]),
    ),
    scan_results: {
      target_name: a.name,
      target_type: 'agent_card',
      status: summary.status,
      analyzers: summary.analyzers_used,
      findings,
      metadata: { agent_id: a.id, url: a.url },
      total_findings: findings.length,
      high_severity_count: summary.critical + summary.high,
    },
  };
}

/** The skill scan result of spec 2.6, with the findings beside the counts. */
export function skillReport(k: SkillRecord, outcomes: AnalyzerOutcome[], summary: ScanSummary) {
  return {
    skill_path: k.path,
    skill_md_url: k.skill_md_url,
    scan_timestamp: summary.scan_timestamp,
    is_safe: summary.is_safe,
    status: summary.status,
    critical_issues: summary.critical,
    high_severity: summary.high,
    medium_severity: summary.medium,
    low_severity: summary.low,
    analyzers_used: summary.analyzers_used,
    scan_failed: summary.scan_failed,
    ...(summary.errors ? { errors: summary.errors } : {}),
    findings: allFindings(outcomes),
  };
}
