import { Lexer, type Token, type Tokens } from 'marked';
import YAML from 'yaml';
import type { Finding } from '../../core/primitives/scanners.ts';

/** A SKILL.md split into frontmatter (parsed YAML) and Markdown body tokens. */
export interface ParsedSkill {
  frontmatter: Record<string, unknown> | undefined;
  frontmatterError?: string;
  body: string;
  /** Fenced and indented code blocks, with their language. */
  code: Array<{ lang: string; text: string }>;
  /** Every link target: Markdown links, images, autolinks and bare URLs. */
  links: string[];
}

const FRONTMATTER = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(\r?\n|$)/;

function walk(tokens: Token[] | undefined, out: ParsedSkill): void {
  for (const t of tokens ?? []) {
    if (t.type === 'code') out.code.push({ lang: (t as Tokens.Code).lang ?? '', text: (t as Tokens.Code).text });
    if (t.type === 'link' || t.type === 'image') out.links.push((t as Tokens.Link).href);
    const nested = t as { tokens?: Token[]; items?: Array<{ tokens?: Token[] }> };
    walk(nested.tokens, out);
    for (const item of nested.items ?? []) walk(item.tokens, out);
  }
}

/** Parse a SKILL.md with a real YAML parser (frontmatter) and Markdown lexer (body). */
export function parseSkillMd(text: string): ParsedSkill {
  const m = FRONTMATTER.exec(text);
  const out: ParsedSkill = { frontmatter: undefined, body: m ? text.slice(m[0].length) : text, code: [], links: [] };
  if (m) {
    try {
      const fm = YAML.parse(m[1]!) as unknown;
      if (fm && typeof fm === 'object' && !Array.isArray(fm)) out.frontmatter = fm as Record<string, unknown>;
      else out.frontmatterError = 'the frontmatter is not a YAML mapping';
    } catch (err) {
      out.frontmatterError = `the frontmatter is not valid YAML: ${(err as Error).message.split('\n')[0]}`;
    }
  }
  walk(new Lexer({ gfm: true }).lex(out.body), out);
  return out;
}

type Check = Omit<Finding, 'analyzer'>;
const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Frontmatter rules of an Agent Skill: name and description required, tool grants no broader than needed. */
export function frontmatterFindings(p: ParsedSkill): Check[] {
  const loc = 'SKILL.md frontmatter';
  if (p.frontmatterError)
    return [{ severity: 'medium', threat_names: ['invalid_skill'], summary: p.frontmatterError, location: loc }];
  const fm = p.frontmatter;
  if (!fm)
    return [
      {
        severity: 'low',
        threat_names: ['invalid_skill'],
        summary: 'SKILL.md has no YAML frontmatter (name, description)',
        location: loc,
      },
    ];
  const out: Check[] = [];
  const name = fm.name;
  if (typeof name !== 'string' || !name)
    out.push({ severity: 'low', threat_names: ['invalid_skill'], summary: 'frontmatter has no name', location: loc });
  else if (name.length > 64 || !NAME.test(name))
    out.push({
      severity: 'low',
      threat_names: ['invalid_skill'],
      summary: `frontmatter name '${name.slice(0, 80)}' is not 1-64 lowercase letters, digits and single hyphens`,
      location: loc,
    });
  const description = fm.description;
  if (typeof description !== 'string' || !description.trim())
    out.push({
      severity: 'low',
      threat_names: ['invalid_skill'],
      summary: 'frontmatter has no description',
      location: loc,
    });
  else if (description.length > 1024)
    out.push({
      severity: 'low',
      threat_names: ['invalid_skill'],
      summary: 'frontmatter description is longer than 1024 characters',
      location: loc,
    });
  const tools = fm['allowed-tools'] ?? fm.allowed_tools;
  const list = typeof tools === 'string' ? tools.split(/[\s,]+/) : Array.isArray(tools) ? tools.map(String) : [];
  const broad = list.filter((t) => t === '*' || /^Bash(\(\*\))?$/.test(t) || /\(\s*\*\s*\)$/.test(t));
  if (broad.length)
    out.push({
      severity: 'medium',
      threat_names: ['privilege_escalation'],
      summary: `allowed-tools grants unrestricted tools: ${broad.join(', ')}`,
      location: loc,
    });
  return out;
}
