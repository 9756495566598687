import type { ScanTarget } from '../../core/primitives/scanners.ts';

/** One piece of readable text of a target and where it came from (a finding's `location`). */
export interface TargetText {
  location: string;
  /** For servers: the tool the text belongs to (spec 2.6 findings are per tool). */
  tool?: string;
  text: string;
}

// Unicode tag characters (U+E0000-E007F) mirror ASCII: invisible to people, read by models.
const TAG_CHARS = /[\u{E0000}-\u{E007F}]/gu;
const TAG_RUNS = /[\u{E0000}-\u{E007F}]+/gu;
// Zero-width and bidi controls that hide or reorder text.
const HIDING_CHARS = /[\u200B-\u200F\u2060-\u2064\uFEFF\u202A-\u202E\u2066-\u2069]/g;

/**
 * What the model reads when the text hides some of it: tag characters decoded
 * to the ASCII they stand for, zero-width characters removed. Undefined when
 * nothing was hidden, so clean text is scanned once.
 */
export function revealHidden(text: string): string | undefined {
  if (!TAG_CHARS.test(text) && !HIDING_CHARS.test(text)) return undefined;
  TAG_CHARS.lastIndex = 0;
  HIDING_CHARS.lastIndex = 0;
  // A run of tag characters becomes its own words, so rules see where the hidden sentence starts and ends.
  return text
    .replace(TAG_RUNS, (run) => {
      let ascii = '';
      for (const c of run) {
        const code = (c.codePointAt(0) ?? 0) - 0xe0000;
        if (code >= 0x20 && code < 0x7f) ascii += String.fromCharCode(code);
      }
      return ` ${ascii} `;
    })
    .replace(HIDING_CHARS, '');
}

function schemaText(schema: unknown): string {
  if (!schema || typeof schema !== 'object') return '';
  try {
    return JSON.stringify(schema);
  } catch {
    return '';
  }
}

/** Every text of a target a user or a model would read, labelled by where it sits. */
export function targetTexts(target: ScanTarget): TargetText[] {
  const out: TargetText[] = [];
  for (const tool of target.tools ?? []) {
    const text = [tool.name, tool.description ?? '', schemaText(tool.input_schema)].filter(Boolean).join('\n');
    out.push({ location: `tools/${tool.name}`, tool: tool.name, text });
  }
  if (target.card) {
    const card = target.card;
    const head = ['name', 'description', 'url', 'provider', 'documentationUrl']
      .map((k) => card[k])
      .filter((v) => typeof v === 'string')
      .join('\n');
    out.push({ location: 'card', text: head });
    const skills = Array.isArray(card.skills) ? card.skills : [];
    skills.forEach((s, i) => {
      const sk = (s ?? {}) as Record<string, unknown>;
      const label = typeof sk.id === 'string' ? sk.id : typeof sk.name === 'string' ? sk.name : String(i);
      out.push({ location: `card/skills/${label}`, text: schemaText(sk) });
    });
  }
  if (target.skill_md !== undefined) out.push({ location: 'SKILL.md', text: target.skill_md });
  for (const [path, text] of Object.entries(target.files ?? {})) out.push({ location: path, text });
  return out;
}
