import type { Finding, ScannerProvider, ScannersCapabilities, Severity } from '../../core/primitives/scanners.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { resultOf } from './result.ts';
import { revealHidden, targetTexts } from './texts.ts';

/** A cheap signal: a pattern, the weight it adds to a text's score, the reason shown, and its threat category. */
interface Signal {
  re: RegExp;
  weight: number;
  reason: string;
  threat: string;
}

export const SIGNALS: readonly Signal[] = [
  {
    re: /\b(ignore|disregard|forget)\s+(all\s+|any\s+|the\s+|your\s+)*(previous|prior|above|earlier)\s+(instructions|prompts?|rules)/i,
    weight: 0.9,
    reason: 'asks the model to drop its instructions',
    threat: 'prompt_injection',
  },
  {
    re: /<\s*(important|system|instructions?|secret|hidden)\s*>|\[INST\]|<\|im_start\|>/i,
    weight: 0.5,
    reason: 'pseudo-system markup',
    threat: 'prompt_injection',
  },
  {
    re: /\b(do\s+not|don't|never)\s+(tell|inform|mention|notify)\s+(it\s+to\s+|this\s+to\s+|to\s+)?(the\s+)?user\b/i,
    weight: 0.6,
    reason: 'hides actions from the user',
    threat: 'prompt_injection',
  },
  {
    re: /(~|\$HOME)\/\.(ssh|aws|gnupg|kube)\b|\bid_(rsa|ed25519)\b|\/etc\/shadow\b/i,
    weight: 0.4,
    reason: 'names a secret file',
    threat: 'credential_harvesting',
  },
  {
    re: /\b(send|post|upload|forward|exfiltrate)\b[^.]{0,80}\bhttps?:\/\//i,
    weight: 0.3,
    reason: 'sends data to a URL',
    threat: 'data_exfiltration',
  },
  {
    re: /\b(api[\s_-]?keys?|private\s+keys?|credentials|session\s+cookies?)\b/i,
    weight: 0.15,
    reason: 'mentions secrets',
    threat: 'credential_harvesting',
  },
  {
    re: /\b(other|another|all\s+other)\s+tools?\b|\binstead\s+of\s+(using|calling)\b/i,
    weight: 0.3,
    reason: 'talks about other tools',
    threat: 'tool_shadowing',
  },
  {
    re: /\b(curl|wget)\b[^\n]*\|\s*(ba)?sh\b|\/dev\/tcp\/|\brm\s+-rf\s+[/~]/i,
    weight: 0.9,
    reason: 'shell command that fetches, connects out or deletes',
    threat: 'command_injection',
  },
  {
    re: /\b(eval|exec|Function)\s*\(\s*(atob|base64\.b64decode|Buffer\.from)/,
    weight: 0.9,
    reason: 'decodes and runs code',
    threat: 'obfuscated_payload',
  },
  {
    re: /[A-Za-z0-9+/]{120,}={0,2}/,
    weight: 0.5,
    reason: 'long encoded blob',
    threat: 'obfuscated_payload',
  },
  {
    re: /\b(you\s+must|always|never)\b/i,
    weight: 0.1,
    reason: 'imperative wording aimed at the model',
    threat: 'prompt_injection',
  },
];

/** Score to severity: a score is a sum of signal weights, capped at 1. */
export function severityOfScore(score: number): Severity {
  if (score >= 0.8) return 'high';
  if (score >= 0.5) return 'medium';
  if (score >= 0.3) return 'low';
  return 'SAFE';
}

/** The score of one text and the reasons that made it up; hidden characters weigh heavily on their own. */
export function scoreText(text: string): { score: number; reasons: string[]; threats: string[] } {
  const revealed = revealHidden(text);
  const subject = revealed ?? text;
  let score = revealed !== undefined ? 0.6 : 0;
  const reasons = revealed !== undefined ? ['invisible characters hide part of the text'] : [];
  const threats = revealed !== undefined ? ['prompt_injection'] : [];
  for (const s of SIGNALS) {
    if (!s.re.test(subject)) continue;
    score += s.weight;
    reasons.push(s.reason);
    threats.push(s.threat);
  }
  return { score: Math.min(1, score), reasons, threats: [...new Set(threats)] };
}

const CAPABILITIES: ScannersCapabilities = { targets: ['server', 'agent', 'skill'], analyzes: true };

/** Pattern scores with reasons: fast, no engine, meant beside yara (a second opinion), not instead of it. */
export const heuristicScanner: ProviderFactory<ScannerProvider> = {
  type: 'heuristic',
  kind: 'scanners',
  autoInstance: true,
  description: 'Weighted pattern scores with reasons (no engine needed)',
  create: (name) => ({
    name,
    type: 'heuristic',
    kind: 'scanners',
    capabilities: CAPABILITIES,
    async scan(target) {
      const findings: Finding[] = [];
      for (const t of targetTexts(target)) {
        const { score, reasons, threats } = scoreText(t.text);
        const severity = severityOfScore(score);
        if (severity === 'SAFE') continue;
        findings.push({
          severity,
          threat_names: threats,
          summary: `score ${score.toFixed(2)}: ${reasons.join('; ')}`,
          location: t.location,
          analyzer: name,
        });
      }
      return resultOf(name, target, findings);
    },
    healthcheck: async () => 'ok',
    close: async () => {},
  }),
};
