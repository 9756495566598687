import type { Doc, EntityKind } from './documents.ts';
import { FIELDS } from './documents.ts';
import { terms } from './tokens.ts';

/** Small parts of ranking the engine's search uses: kind words, ordering, the kept-best list, match context. */

/**
 * Words that say which kind of thing the person wants. A Map, as EXPANSIONS (tokens.ts): an object answered a
 * query word like `constructor` with Object.prototype's function.
 */
export const KIND_WORDS: ReadonlyMap<string, EntityKind> = new Map(
  Object.entries({
    agent: 'a2a_agent',
    agents: 'a2a_agent',
    assistant: 'a2a_agent',
    bot: 'a2a_agent',
    someone: 'a2a_agent',
    skill: 'skill',
    skills: 'skill',
    playbook: 'skill',
    instructions: 'skill',
    guide: 'skill',
    server: 'mcp_server',
    servers: 'mcp_server',
    integration: 'mcp_server',
    tool: 'tool',
    tools: 'tool',
    function: 'tool',
  }) as Array<[string, EntityKind]>,
);

export interface Entry {
  slot: number;
  score: number;
  l: number;
  sem: number;
}

/** Inserts into a list kept in ranking order and at most k long. */
export function insert(list: Entry[], e: Entry, k: number, docs: (Doc | undefined)[]): void {
  const id = docs[e.slot]!.id;
  let i = list.length;
  while (i > 0 && before(e.score, id, list[i - 1]!.score, docs[list[i - 1]!.slot]!.id)) i--;
  list.splice(i, 0, e);
  if (list.length > k) list.pop();
}

/** Candidates per kind the second stage re-scores, and how far under the floor the first stage reaches. */
export const RERANK_PER_KIND = 30;
export const RERANK_FLOOR = 0.5;

export const round = (x: number) => Math.round(x * 10_000) / 10_000;
/** Ranking order: higher score first, then id, so equal scores come out the same way every time. */
export const before = (score: number, id: string, otherScore: number, otherId: string) =>
  score > otherScore || (score === otherScore && id < otherId);

/** The first field, in weight order, holding a query term: the reason a person can read for the match. */
export function context(doc: Doc, q: Set<string>): string | undefined {
  for (const f of FIELDS) {
    const text = doc.fields[f];
    if (text && terms(text).some((t) => q.has(t))) return text.length > 200 ? `${text.slice(0, 197)}...` : text;
  }
  return doc.fields.description || undefined;
}
