import type { Finding, ScannerProvider, ScannersCapabilities } from '../../core/primitives/scanners.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { scoreText, severityOfScore } from './heuristic.ts';
import { resultOf } from './result.ts';

const CAPABILITIES: ScannersCapabilities = { targets: ['agent'], analyzes: true };

/** Hosts where plain http is normal: a developer's own machine and reserved test names. */
export function isDevHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return (
    h === 'localhost' ||
    h.endsWith('.localhost') ||
    h.endsWith('.local') ||
    h.endsWith('.test') ||
    h === '::1' ||
    /^127\./.test(h) ||
    h === '0.0.0.0'
  );
}

const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v : undefined);

function schemeFindings(card: Record<string, unknown>, push: (f: Omit<Finding, 'analyzer'>) => void): void {
  const schemes = (card.security_schemes ?? card.securitySchemes) as Record<string, unknown> | undefined;
  if (!schemes || typeof schemes !== 'object' || Object.keys(schemes).length === 0) {
    push({
      severity: 'low',
      threat_names: ['weak_authentication'],
      summary: 'The card declares no security scheme: anyone can call the agent',
      location: 'card/security_schemes',
    });
    return;
  }
  for (const [id, raw] of Object.entries(schemes)) {
    const s = (raw ?? {}) as Record<string, unknown>;
    const type = String(s.type ?? '').toLowerCase();
    const where = `card/security_schemes/${id}`;
    if (type === 'none' || type === 'noauth' || type === 'anonymous')
      push({
        severity: 'medium',
        threat_names: ['weak_authentication'],
        summary: `Scheme '${id}' is no authentication`,
        location: where,
      });
    if ((type === 'apikey' || type === 'api_key') && String(s.in ?? '').toLowerCase() === 'query')
      push({
        severity: 'medium',
        threat_names: ['weak_authentication'],
        summary: `Scheme '${id}' sends the API key in the query string, where logs and proxies keep it`,
        location: where,
      });
    const flows = (s.flows ?? {}) as Record<string, unknown>;
    for (const legacy of ['implicit', 'password'])
      if (legacy in flows)
        push({
          severity: 'medium',
          threat_names: ['weak_authentication'],
          summary: `Scheme '${id}' allows the OAuth2 ${legacy} flow (deprecated, leaks tokens or passwords)`,
          location: where,
        });
    const scopes = Object.values(flows).flatMap((f) => Object.keys(((f ?? {}) as { scopes?: object }).scopes ?? {}));
    const broad = scopes.filter((sc) => sc === '*' || /(^|[:._-])(all|admin|root|\*)$/i.test(sc));
    if (broad.length)
      push({
        severity: 'medium',
        threat_names: ['over_broad_permissions'],
        summary: `Scheme '${id}' asks for over-broad scopes: ${broad.join(', ')}`,
        location: where,
      });
  }
}

/** Agent-card checks: required fields, transport, injection text in skills, security schemes. */
export function checkCard(card: Record<string, unknown>): Array<Omit<Finding, 'analyzer'>> {
  const out: Array<Omit<Finding, 'analyzer'>> = [];
  const push = (f: Omit<Finding, 'analyzer'>) => out.push(f);
  for (const field of ['name', 'description', 'url', 'version'])
    if (!str(card[field]))
      push({
        severity: field === 'url' || field === 'name' ? 'medium' : 'low',
        threat_names: ['invalid_card'],
        summary: `The card has no ${field}`,
        location: `card/${field}`,
      });
  const url = str(card.url);
  if (url) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      push({
        severity: 'medium',
        threat_names: ['invalid_card'],
        summary: `url '${url}' is not a URL`,
        location: 'card/url',
      });
    }
    if (parsed && parsed.protocol !== 'https:' && !isDevHost(parsed.hostname))
      push({
        severity: 'medium',
        threat_names: ['insecure_transport'],
        summary: `url uses ${parsed.protocol.replace(':', '')} to ${parsed.hostname}: messages and credentials travel unencrypted`,
        location: 'card/url',
      });
  }
  const skills = card.skills;
  if (skills !== undefined && !Array.isArray(skills))
    push({ severity: 'low', threat_names: ['invalid_card'], summary: 'skills is not a list', location: 'card/skills' });
  const texts: Array<[string, string]> = [['card/description', str(card.description) ?? '']];
  for (const [i, s] of (Array.isArray(skills) ? skills : []).entries()) {
    const sk = (s ?? {}) as Record<string, unknown>;
    const label = str(sk.id) ?? str(sk.name) ?? String(i);
    if (!str(sk.name) && !str(sk.id))
      push({
        severity: 'low',
        threat_names: ['invalid_card'],
        summary: `skill ${i} has no id or name`,
        location: `card/skills/${i}`,
      });
    texts.push([
      `card/skills/${label}`,
      [sk.name, sk.description, ...(Array.isArray(sk.examples) ? sk.examples : [])]
        .filter((x) => typeof x === 'string')
        .join('\n'),
    ]);
  }
  for (const [location, text] of texts) {
    const { score, reasons, threats } = scoreText(text);
    if (severityOfScore(score) === 'high')
      push({ severity: 'high', threat_names: threats, summary: `Injection text: ${reasons.join('; ')}`, location });
  }
  schemeFindings(card, push);
  return out;
}

export const specScanner: ProviderFactory<ScannerProvider> = {
  type: 'spec',
  kind: 'scanners',
  autoInstance: true,
  description: 'A2A agent-card checks: fields, https, injection text in skills, over-broad security schemes',
  create: (name) => ({
    name,
    type: 'spec',
    kind: 'scanners',
    capabilities: CAPABILITIES,
    async scan(target) {
      if (target.kind !== 'agent' || !target.card)
        throw new Error(`the spec scanner reads agent cards; ${target.kind} ${target.name} has none`);
      return resultOf(
        name,
        target,
        checkCard(target.card).map((f) => ({ ...f, analyzer: name })),
      );
    },
    healthcheck: async () => 'ok',
    close: async () => {},
  }),
};
