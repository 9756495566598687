import type { AgentRecord, ServerRecord, SkillRecord } from '../catalog/records.ts';

/** The four kinds of thing discovery finds (the reference registry's entity_types). */
export type EntityKind = 'mcp_server' | 'tool' | 'a2a_agent' | 'skill';
export const ENTITY_KINDS: readonly EntityKind[] = ['mcp_server', 'tool', 'a2a_agent', 'skill'];

/** Searchable fields; each has a BM25 weight (bm25.ts) because a word in a name says more than one in a body. */
export type Field = 'name' | 'tool_names' | 'tags' | 'description' | 'tool_descriptions' | 'body' | 'metadata';
export const FIELDS: readonly Field[] = [
  'name',
  'tool_names',
  'tags',
  'description',
  'tool_descriptions',
  'body',
  'metadata',
];

/**
 * One searchable entity. `key` is the catalog record it comes from (server,
 * agent or skill path): access and enabled checks read the live record at
 * query time, so the index only has to follow text changes.
 */
export interface Doc {
  id: string;
  kind: EntityKind;
  key: string;
  /** Tool name for tools; the record's path otherwise. */
  name: string;
  /** The display name (server_name, tool name, agent or skill name): a query that is just this names the entity. */
  title: string;
  fields: Partial<Record<Field, string>>;
  /** What the embedding reads besides the title: description and the most telling short fields (not bodies). */
  gistFields: readonly Field[];
}

/** Metadata values as text: strings, numbers and string lists, keys included (`team: payments`). */
function metadataText(meta: Record<string, unknown> | undefined): string {
  if (!meta) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(meta)) {
    if (typeof v === 'string' || typeof v === 'number') parts.push(`${k} ${v}`);
    else if (Array.isArray(v)) parts.push(`${k} ${v.filter((x) => typeof x === 'string').join(' ')}`);
  }
  return parts.join(' ').slice(0, 2000);
}

/** Tool input parameter names often say what a tool is about (`city`, `sql`, `repo`). */
function paramNames(schema: Record<string, unknown> | undefined): string {
  const props = schema?.properties;
  return props && typeof props === 'object' ? Object.keys(props).join(' ') : '';
}

export function serverDocs(s: ServerRecord): Doc[] {
  const tools = s.tools ?? [];
  const name = `${s.server_name} ${s.path}`;
  const server: Doc = {
    id: `mcp_server:${s.path}`,
    kind: 'mcp_server',
    key: s.path,
    name: s.path,
    title: s.server_name,
    fields: {
      name,
      tags: s.tags.join(' '),
      description: s.description,
      tool_names: tools.map((t) => t.name).join(' '),
      tool_descriptions: tools.map((t) => t.description ?? '').join(' '),
      metadata: metadataText(s.metadata),
    },
    gistFields: ['description', 'tags', 'tool_names'],
  };
  const toolDocs = tools.map(
    (t): Doc => ({
      id: `tool:${s.path}#${t.name}`,
      kind: 'tool',
      key: s.path,
      name: t.name,
      title: t.name,
      fields: {
        name: t.name,
        description: t.description ?? '',
        // The server's name and tags place a tool (`search` of the github server) without outweighing its own words.
        tool_names: s.server_name,
        tags: s.tags.join(' '),
        metadata: paramNames(t.inputSchema),
      },
      gistFields: ['description'],
    }),
  );
  return [server, ...toolDocs];
}

export function agentDoc(a: AgentRecord): Doc {
  const skills = a.skills ?? [];
  const skillTags = skills.flatMap((k) => k.tags ?? []);
  return {
    id: `a2a_agent:${a.path}`,
    kind: 'a2a_agent',
    key: a.path,
    name: a.path,
    title: a.name,
    fields: {
      name: `${a.name} ${a.path}`,
      tool_names: skills.map((k) => `${k.name} ${k.id ?? ''}`).join(' '),
      tags: [...a.tags, ...skillTags].join(' '),
      description: a.description,
      tool_descriptions: skills.map((k) => k.description ?? '').join(' '),
      metadata: a.provider ?? '',
    },
    gistFields: ['description', 'tool_names', 'tool_descriptions'],
  };
}

/** The SKILL.md body without its front matter (already in name/description) and markup. */
function skillBody(md: string): string {
  return md
    .replace(/^---[\s\S]*?\n---\s*/, '')
    .replace(/[#*`>_[\]()-]+/g, ' ')
    .slice(0, 20_000);
}

export function skillDoc(k: SkillRecord): Doc {
  return {
    id: `skill:${k.path}`,
    kind: 'skill',
    key: k.path,
    name: k.path,
    title: k.name,
    fields: {
      name: `${k.name} ${k.path}`,
      tags: k.tags.join(' '),
      description: k.description,
      tool_names: k.allowed_tools.join(' '),
      body: skillBody(k.skill_md ?? ''),
    },
    gistFields: ['description', 'tags'],
  };
}

/** The text an embeddings endpoint is sent for a doc. */
export function gistOf(d: Doc): string {
  return [d.title, ...d.gistFields.map((f) => d.fields[f] ?? '')].join(' ');
}

/** Same text, same index entry: a record whose fields did not change (a health update) is not reindexed. */
export function sameText(a: Doc, b: Doc): boolean {
  if (a.title !== b.title || a.kind !== b.kind) return false;
  for (const f of FIELDS) if ((a.fields[f] ?? '') !== (b.fields[f] ?? '')) return false;
  return true;
}
