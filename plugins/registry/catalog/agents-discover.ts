import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest } from '../../../core/errors.ts';
import type { UserContext } from '../auth/context.ts';
import { agentVisibility } from './access.ts';
import type { AgentRecord } from './records.ts';
import { SECURITY_PENDING } from './scan.ts';
import { currentUser } from './server-actions.ts';
import { ErrorResponses } from './shared-schemas.ts';
import { discoveryFor } from '../discovery/lifecycle.ts';
import { allowFor, shape } from '../discovery/routes.ts';

/** Agent discovery by skills (ANCHOR-FACTS scoring) and by free text through the discovery engine (spec 4.1). */

const tags = ['registry: agents'];
const MaxResults = Type.Integer({ minimum: 1, maximum: 100, default: 10 });

/** Discoverable: enabled, not held for security review, and visible to the caller. */
function discoverable(user: UserContext) {
  const visible = agentVisibility(user);
  return (a: AgentRecord) => a.is_enabled && !a.tags.includes(SECURITY_PENDING) && visible(a);
}

export default async function agentDiscoveryRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const discovery = discoveryFor(catalog, fastify.sb.settings.config.registry, fastify.log);

  app.post(
    '/api/agents/discover',
    {
      schema: {
        tags,
        summary: 'Agents by skills: 0.6 x skills matched + 0.2 x tags matched + 0.2 x trust',
        body: Type.Object({
          skills: Type.Optional(Type.Array(Type.String())),
          tags: Type.Optional(Type.Array(Type.String())),
        }),
        querystring: Type.Object({ max_results: MaxResults }),
        response: {
          200: Type.Object({
            agents: Type.Array(
              Type.Object({
                path: Type.String(),
                name: Type.String(),
                description: Type.String(),
                url: Type.String(),
                relevance_score: Type.Number(),
                matching_skills: Type.Array(Type.String()),
                trust_level: Type.String(),
              }),
            ),
            query: Type.Object({ skills: Type.Array(Type.String()), tags: Type.Array(Type.String()) }),
          }),
          ...ErrorResponses,
        },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const skills = (request.body.skills ?? []).map((s) => s.trim()).filter(Boolean);
      if (!skills.length)
        throw badRequest('SB_ERR_REGISTRY_NO_SKILLS', 'No skills provided: send {"skills": ["<skill name>", ...]}');
      const wantTags = request.body.tags ?? [];
      const hits = catalog.agents.discover(skills, wantTags, discoverable(user), request.query.max_results);
      return {
        agents: hits.map((h) => ({
          path: h.agent.path,
          name: h.agent.name,
          description: h.agent.description,
          url: h.agent.url,
          relevance_score: h.relevance_score,
          matching_skills: h.matching_skills,
          trust_level: h.agent.trust_level,
        })),
        query: { skills, tags: wantTags },
      };
    },
  );

  app.post(
    '/api/agents/discover/semantic',
    {
      schema: {
        tags,
        summary: 'Agents by free text: the registry search engine (lexical + semantic), agents only',
        querystring: Type.Object({ query: Type.Optional(Type.String()), max_results: MaxResults }),
        response: {
          200: Type.Object({
            agents: Type.Array(
              Type.Object({
                path: Type.String(),
                name: Type.String(),
                description: Type.String(),
                url: Type.String(),
                relevance_score: Type.Number({ minimum: 0, maximum: 1 }),
                matching_skills: Type.Array(Type.String()),
                match_context: Type.Optional(Type.String()),
              }),
            ),
            query: Type.String(),
          }),
          ...ErrorResponses,
        },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const query = (request.query.query ?? '').trim();
      if (!query) throw badRequest('SB_ERR_REGISTRY_EMPTY_QUERY', 'query must not be empty');
      // The same engine as POST /api/search/semantic, asked for agents only.
      const { hits } = await discovery.search(query, {
        kinds: new Set(['a2a_agent']),
        perKind: request.query.max_results,
        allow: allowFor(catalog, user, false),
      });
      const agents = shape(catalog, query, hits, 'hybrid').agents;
      return {
        agents: agents.map((a) => ({
          path: a.path,
          name: a.name,
          description: a.description,
          url: a.url,
          relevance_score: a.relevance_score,
          matching_skills: a.matching_skills,
          match_context: a.match_context,
        })),
        query,
      };
    },
  );
}
