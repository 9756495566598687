import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../../core/errors.ts';
import type { UserContext } from '../auth/context.ts';
import { agentVisibility, isAdmin, serverVisibility, skillVisible } from '../catalog/access.ts';
import type { Catalog } from '../catalog/context.ts';
import { SECURITY_PENDING } from '../catalog/scan.ts';
import { currentUser } from '../catalog/server-actions.ts';
import { ErrorBody, ErrorResponses } from '../catalog/shared-schemas.ts';
import { type Doc, ENTITY_KINDS, type EntityKind } from './documents.ts';
import type { Hit } from './engine.ts';
import { discoveryFor } from './lifecycle.ts';
import { terms } from './tokens.ts';

/** POST /api/search/semantic: one ranked search over servers, tools, agents and skills (the reference registry's shape). */

const Score = Type.Number({ minimum: 0, maximum: 1, description: 'Relevance in [0, 1], comparable across kinds' });
const Context = Type.Optional(Type.String({ description: 'The text that matched' }));

const MatchingTool = Type.Object({
  tool_name: Type.String(),
  description: Type.String(),
  relevance_score: Score,
  match_context: Context,
});
const ServerResult = Type.Object({
  path: Type.String(),
  server_name: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  num_tools: Type.Integer(),
  is_enabled: Type.Boolean(),
  relevance_score: Score,
  match_context: Context,
  matching_tools: Type.Array(MatchingTool),
});
const ToolResult = Type.Object({
  server_path: Type.String(),
  server_name: Type.String(),
  tool_name: Type.String(),
  description: Type.String(),
  inputSchema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  relevance_score: Score,
  match_context: Context,
});
const AgentResult = Type.Object({
  path: Type.String(),
  name: Type.String(),
  description: Type.String(),
  url: Type.String(),
  tags: Type.Array(Type.String()),
  trust_level: Type.String(),
  is_enabled: Type.Boolean(),
  relevance_score: Score,
  match_context: Context,
  matching_skills: Type.Array(Type.String()),
});
const SkillResult = Type.Object({
  path: Type.String(),
  name: Type.String(),
  skill_name: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  skill_md_url: Type.String(),
  visibility: Type.String(),
  is_enabled: Type.Boolean(),
  relevance_score: Score,
  match_context: Context,
});

export const SearchRequest = Type.Object({
  query: Type.String({ maxLength: 512, description: 'What you are looking for, in your own words' }),
  entity_types: Type.Optional(
    Type.Array(Type.Union(ENTITY_KINDS.map((k) => Type.Literal(k))), {
      description: 'Kinds to search; all four when absent',
    }),
  ),
  max_results: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Per kind' }),
  include_disabled: Type.Boolean({
    default: false,
    description: 'Admins only: also disabled items and items held for security review',
  }),
});

export const SearchResponse = Type.Object({
  query: Type.String(),
  search_mode: Type.Union([Type.Literal('hybrid'), Type.Literal('lexical-only')]),
  servers: Type.Array(ServerResult),
  tools: Type.Array(ToolResult),
  agents: Type.Array(AgentResult),
  skills: Type.Array(SkillResult),
  total_servers: Type.Integer(),
  total_tools: Type.Integer(),
  total_agents: Type.Integer(),
  total_skills: Type.Integer(),
});
export type SearchResponse = Static<typeof SearchResponse>;

/** What the caller may see: visible, and enabled and not held for review unless an admin asks for those too. */
export function allowFor(catalog: Catalog, user: UserContext, includeDisabled: boolean): (d: Doc) => boolean {
  const everything = includeDisabled && isAdmin(user);
  const live = (r: { is_enabled: boolean; tags: string[] }) =>
    everything || (r.is_enabled && !r.tags.includes(SECURITY_PENDING));
  const serverOk = serverVisibility(user);
  const agentOk = agentVisibility(user);
  return (d) => {
    if (d.kind === 'mcp_server' || d.kind === 'tool') {
      const s = catalog.servers.get(d.key);
      return !!s && live(s) && serverOk(s);
    }
    if (d.kind === 'a2a_agent') {
      const a = catalog.agents.index.get(d.key);
      return !!a && live(a) && agentOk(a);
    }
    const k = catalog.skills.index.get(d.key);
    return !!k && live(k) && skillVisible(user, k);
  };
}

const MATCHING_TOOLS = 5;

/** Shapes engine hits as the reference registry does: servers carry their matching tools as well. */
export function shape(catalog: Catalog, query: string, hits: Hit[], mode: SearchResponse['search_mode']) {
  const out: SearchResponse = {
    query,
    search_mode: mode,
    servers: [],
    tools: [],
    agents: [],
    skills: [],
    total_servers: 0,
    total_tools: 0,
    total_agents: 0,
    total_skills: 0,
  };
  const asked = new Set(terms(query));
  const toolsOf = new Map<string, Hit[]>();
  for (const h of hits) if (h.doc.kind === 'tool') toolsOf.set(h.doc.key, [...(toolsOf.get(h.doc.key) ?? []), h]);
  for (const h of hits) {
    const base = { relevance_score: h.relevance_score, match_context: h.match_context };
    if (h.doc.kind === 'mcp_server' || h.doc.kind === 'tool') {
      const s = catalog.servers.get(h.doc.key);
      if (!s) continue;
      if (h.doc.kind === 'mcp_server') {
        out.servers.push({
          path: s.path,
          server_name: s.server_name,
          description: s.description,
          tags: s.tags,
          num_tools: s.tools.length,
          is_enabled: s.is_enabled,
          ...base,
          matching_tools: (toolsOf.get(s.path) ?? []).slice(0, MATCHING_TOOLS).map((t) => ({
            tool_name: t.doc.name,
            description: t.doc.fields.description ?? '',
            relevance_score: t.relevance_score,
            match_context: t.match_context,
          })),
        });
      } else {
        const tool = s.tools.find((t) => t.name === h.doc.name);
        out.tools.push({
          server_path: s.path,
          server_name: s.server_name,
          tool_name: h.doc.name,
          description: tool?.description ?? '',
          ...(tool?.inputSchema ? { inputSchema: tool.inputSchema } : {}),
          ...base,
        });
      }
    } else if (h.doc.kind === 'a2a_agent') {
      const a = catalog.agents.index.get(h.doc.key);
      if (!a) continue;
      out.agents.push({
        path: a.path,
        name: a.name,
        description: a.description,
        url: a.url,
        tags: a.tags,
        trust_level: a.trust_level,
        is_enabled: a.is_enabled,
        ...base,
        matching_skills: a.skills
          .filter((k) => terms(`${k.name} ${k.description ?? ''}`).some((x) => asked.has(x)))
          .map((k) => k.name),
      });
    } else {
      const k = catalog.skills.index.get(h.doc.key);
      if (!k) continue;
      out.skills.push({
        path: k.path,
        name: k.name,
        skill_name: k.name,
        description: k.description,
        tags: k.tags,
        skill_md_url: k.skill_md_url,
        visibility: k.visibility,
        is_enabled: k.is_enabled,
        ...base,
      });
    }
  }
  out.total_servers = out.servers.length;
  out.total_tools = out.tools.length;
  out.total_agents = out.agents.length;
  out.total_skills = out.skills.length;
  return out;
}

export default async function discoveryRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const discovery = discoveryFor(catalog, fastify.sb.settings.config.registry, fastify.log);

  app.post(
    '/api/search/semantic',
    {
      schema: {
        tags: ['registry: search'],
        summary: 'Search servers, tools, agents and skills by what they do (hybrid lexical + semantic ranking)',
        description:
          'Results are limited to what the caller may list; disabled items and items held for security review are left out unless an admin sets include_disabled. relevance_score is in [0, 1] and comparable across kinds; results under the confidence floor are not returned.',
        body: SearchRequest,
        response: { 200: SearchResponse, ...ErrorResponses, 503: ErrorBody },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const query = request.body.query.trim();
      if (!query)
        throw badRequest('SB_ERR_REGISTRY_EMPTY_QUERY', 'query must not be empty: say what you are looking for');
      const kinds = new Set<EntityKind>(request.body.entity_types?.length ? request.body.entity_types : ENTITY_KINDS);
      const { hits, mode } = await discovery.search(query, {
        kinds,
        perKind: request.body.max_results,
        allow: allowFor(catalog, user, request.body.include_disabled),
      });
      return shape(catalog, query, hits, mode);
    },
  );
}
