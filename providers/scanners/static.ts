import { classifyUrl, type HostLookup } from '../../core/address-guard.ts';
import { unavailable } from '../../core/errors.ts';
import type { Finding, ScannerProvider, ScannersCapabilities } from '../../core/primitives/scanners.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { resultOf } from './result.ts';
import { frontmatterFindings, parseSkillMd } from './skill-md.ts';
import type { TargetText } from './texts.ts';
import { defaultRulesDir, YaraEngine } from './yara-engine.ts';

const CAPABILITIES: ScannersCapabilities = { targets: ['skill'], analyzes: true };
const BARE_URL = /\b(?:https?|ftp|file|javascript|data):[^\s<>()"'`\]]+/gi;
const SHORTENERS = new Set(['bit.ly', 'tinyurl.com', 't.co', 'goo.gl', 'is.gd', 'ow.ly', 'rebrand.ly', 'cutt.ly']);
/** No DNS by default: a scan judges addresses and names it can read, and stays fast and repeatable. */
const noDns: HostLookup = async () => [];

type Check = Omit<Finding, 'analyzer'>;

/** Links through the SSRF guard's classifier: metadata and internal addresses, odd schemes, shorteners. */
async function linkFindings(links: Iterable<string>, lookup?: HostLookup): Promise<Check[]> {
  const out: Check[] = [];
  for (const raw of new Set(links)) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      continue; // relative links point inside the skill
    }
    const where = `link ${raw.slice(0, 200)}`;
    if (!['http:', 'https:', 'mailto:'].includes(url.protocol)) {
      out.push({
        severity: 'high',
        threat_names: ['malicious_url'],
        summary: `Link with the ${url.protocol} scheme`,
        location: where,
      });
      continue;
    }
    if (url.protocol === 'mailto:') continue;
    const classes = await classifyUrl(url, lookup);
    if (classes.includes('metadata'))
      out.push({
        severity: 'critical',
        threat_names: ['malicious_url'],
        summary: `Link to a cloud metadata address (${url.hostname})`,
        location: where,
      });
    else if (classes.some((c) => c === 'private' || c === 'link-local'))
      out.push({
        severity: 'high',
        threat_names: ['malicious_url'],
        summary: `Link to an internal address (${url.hostname})`,
        location: where,
      });
    else if (classes.includes('loopback'))
      out.push({
        severity: 'medium',
        threat_names: ['malicious_url'],
        summary: `Link to the local machine (${url.hostname})`,
        location: where,
      });
    if (url.username || url.password)
      out.push({
        severity: 'high',
        threat_names: ['malicious_url'],
        summary: 'Link carries credentials in the URL',
        location: where,
      });
    if (SHORTENERS.has(url.hostname.toLowerCase()))
      out.push({
        severity: 'low',
        threat_names: ['malicious_url'],
        summary: `Link through a URL shortener (${url.hostname}) hides where it goes`,
        location: where,
      });
  }
  return out;
}

/**
 * Static analysis of an Agent Skill: SKILL.md parsed (YAML frontmatter
 * validated, Markdown lexed), the text, code blocks and files run through the
 * YARA rule pack, links judged by the SSRF guard. Covers the seven categories
 * of spec 4.10.4 (the rule pack holds prompt/command injection, exfiltration,
 * privilege escalation, social engineering and sensitive-data rules; links are
 * the malicious-URL check). Option `resolve_links: true` resolves link names
 * by DNS as well.
 */
export const staticScanner: ProviderFactory<ScannerProvider> = {
  type: 'static',
  kind: 'scanners',
  autoInstance: true,
  description:
    'Skills: YAML frontmatter checks, Markdown code blocks and files through the YARA rules, links through the SSRF guard',
  create: async (name, options) => {
    const engine = await YaraEngine.compile((options.rules_dir as string | undefined) ?? defaultRulesDir());
    const lookup = options.resolve_links === true ? undefined : noDns;
    return {
      name,
      type: 'static',
      kind: 'scanners',
      capabilities: CAPABILITIES,
      async scan(target) {
        if (!engine)
          throw unavailable(
            'SB_ERR_SCANNER_UNAVAILABLE',
            'The static scanner needs the YARA engine (@litko/yara-x), which does not load here',
          );
        if (target.skill_md === undefined) throw new Error(`skill ${target.name} has no SKILL.md to scan`);
        const parsed = parseSkillMd(target.skill_md);
        const texts: TargetText[] = [{ location: 'SKILL.md', text: target.skill_md }];
        parsed.code.forEach((c, i) => {
          texts.push({ location: `SKILL.md code block ${i + 1}${c.lang ? ` (${c.lang})` : ''}`, text: c.text });
        });
        const links = [...parsed.links, ...(target.skill_md.match(BARE_URL) ?? [])];
        for (const [path, text] of Object.entries(target.files ?? {})) {
          texts.push({ location: path, text });
          links.push(...(text.match(BARE_URL) ?? []));
        }
        // A rule that fires on a code block also fires on the whole SKILL.md: keep the narrower location.
        const yara = engine.scanTexts(texts, name);
        const narrow = new Set(yara.filter((f) => f.location !== 'SKILL.md').map((f) => f.summary));
        const findings: Finding[] = [
          ...frontmatterFindings(parsed).map((f) => ({ ...f, analyzer: name })),
          ...yara.filter((f) => f.location !== 'SKILL.md' || !narrow.has(f.summary)),
          ...(await linkFindings(links, lookup)).map((f) => ({ ...f, analyzer: name })),
        ];
        return resultOf(name, target, findings);
      },
      healthcheck: async () => (engine ? 'ok' : 'down'),
      close: async () => {},
    };
  },
};
