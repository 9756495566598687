import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { conflict, forbidden, notFound } from '../../../core/errors.ts';
import { hasPermission } from '../auth/access.ts';
import type { UserContext } from '../auth/context.ts';
import { agentVisibility, agentVisible, can, ownsOrAdmin } from './access.ts';
import { agentCard, AgentBody, buildAgent, normalizeAgentPath } from './agent-input.ts';
import { AgentCardSchema, AgentListItem } from './agent-views.ts';
import type { AgentRecord } from './records.ts';
import { applyVerdict, reviewed, SECURITY_PENDING } from './scan.ts';
import { currentUser } from './server-actions.ts';
import { ErrorResponses } from './shared-schemas.ts';

/** A2A agents (spec 4.1); discovery is in agents-discover.ts, rescan in a later issue. */

const tags = ['registry: agents'];
const AgentParam = Type.Object({ agent: Type.String({ description: 'Agent path without the leading slash' }) });

export default async function agentRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const agents = catalog.agents.index;

  /** The agent, when the caller may see it, or holds `actingBy` on it (a toggle grant needs no separate read grant). */
  const find = (user: UserContext, raw: string, actingBy?: 'toggle_service'): AgentRecord => {
    const a = agents.get(normalizeAgentPath(raw));
    if (!a) throw notFound('SB_ERR_REGISTRY_AGENT_NOT_FOUND', `No agent is registered at /${raw}`);
    if (!agentVisible(user, a) && !(actingBy && can(user, actingBy, a.path)))
      throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `You do not have access to agent ${a.path}`);
    return a;
  };

  app.post(
    '/api/agents/register',
    {
      schema: {
        tags,
        summary: 'Register an A2A agent card; needs publish_agent; 409 when the path exists',
        body: AgentBody,
        response: {
          201: Type.Object({
            message: Type.String(),
            agent: Type.Object({
              name: Type.String(),
              path: Type.String(),
              url: Type.String(),
              num_skills: Type.Integer(),
              registered_at: Type.String(),
              is_enabled: Type.Boolean(),
            }),
            security_scan: Type.Optional(
              Type.Object({}, { additionalProperties: true, description: 'Scan summary (spec 2.6), when scanned' }),
            ),
          }),
          ...ErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const draft = buildAgent(request.body, user);
      if (!hasPermission(user, 'publish_agent', draft.path) && !(user.is_admin && !user.resource)) {
        throw forbidden(
          'SB_ERR_REGISTRY_FORBIDDEN',
          `Permission 'publish_agent' is required to register ${draft.path}`,
        );
      }
      if (agents.has(draft.path))
        throw conflict('SB_ERR_REGISTRY_AGENT_EXISTS', `Agent path ${draft.path} already exists`);
      const verdict = await catalog.scanner.agent(draft);
      const record = applyVerdict(draft, verdict);
      await agents.set(record.path, record);
      return reply.status(201).send({
        message: `Agent ${record.path} registered`,
        agent: {
          name: record.name,
          path: record.path,
          url: record.url,
          num_skills: record.skills.length,
          registered_at: record.registered_at,
          is_enabled: record.is_enabled,
        },
        ...(verdict.summary ? { security_scan: verdict.summary } : {}),
      });
    },
  );

  app.get(
    '/api/agents',
    {
      schema: {
        tags,
        summary: 'Agents the caller may see',
        querystring: Type.Object({
          query: Type.Optional(Type.String()),
          enabled_only: Type.Boolean({ default: false }),
          visibility: Type.Optional(Type.String()),
        }),
        response: {
          200: Type.Object({ agents: Type.Array(AgentListItem), total_count: Type.Integer() }),
          ...ErrorResponses,
        },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const { query, enabled_only, visibility } = request.query;
      const q = query?.trim().toLowerCase() ?? '';
      const visible = agentVisibility(user);
      const list = agents.list().filter((a) => {
        if (enabled_only && !a.is_enabled) return false;
        if (visibility && a.visibility !== visibility) return false;
        if (
          q &&
          !(
            a.name.toLowerCase().includes(q) ||
            a.path.includes(q) ||
            a.description.toLowerCase().includes(q) ||
            a.tags.some((t) => t.toLowerCase().includes(q)) ||
            a.skills.some((s) => s.name.toLowerCase().includes(q))
          )
        )
          return false;
        return visible(a);
      });
      return { agents: list.map((a) => ({ ...a, num_skills: a.skills.length })), total_count: list.length };
    },
  );

  app.get(
    '/api/agents/:agent',
    {
      schema: {
        tags,
        summary: 'An agent card',
        params: AgentParam,
        response: { 200: AgentCardSchema, ...ErrorResponses },
      },
    },
    async (request) => agentCard(find(currentUser(request), request.params.agent)),
  );

  app.put(
    '/api/agents/:agent',
    {
      schema: {
        tags,
        summary: 'Replace an agent card; needs modify_service (or modify_agent) and ownership',
        params: AgentParam,
        body: AgentBody,
        response: { 200: AgentCardSchema, ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const existing = find(user, request.params.agent);
      if (!can(user, 'modify_service', existing.path) && !hasPermission(user, 'modify_agent', existing.path)) {
        throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `Permission 'modify_service' is required on ${existing.path}`);
      }
      if (!ownsOrAdmin(user, existing.registered_by, existing.path))
        throw forbidden(
          'SB_ERR_REGISTRY_NOT_OWNER',
          `Only the owner of ${existing.path} (${existing.registered_by}) or an admin may change it`,
        );
      const next = buildAgent(request.body, user, existing, existing.path);
      if (existing.tags.includes(SECURITY_PENDING) && !next.tags.includes(SECURITY_PENDING))
        next.tags.push(SECURITY_PENDING);
      await agents.set(next.path, next);
      return agentCard(next);
    },
  );

  app.delete(
    '/api/agents/:agent',
    {
      schema: {
        tags,
        summary: 'Remove an agent; admin or owner',
        params: AgentParam,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const a = find(user, request.params.agent);
      if (!ownsOrAdmin(user, a.registered_by, a.path))
        throw forbidden('SB_ERR_REGISTRY_NOT_OWNER', `Only the owner of ${a.path} or an admin may remove it`);
      await agents.delete(a.path);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/agents/:agent/toggle',
    {
      schema: {
        tags,
        summary: 'Enable or disable an agent (query enabled); needs toggle_service',
        params: AgentParam,
        querystring: Type.Object({ enabled: Type.Boolean() }),
        response: {
          200: Type.Object({ path: Type.String(), is_enabled: Type.Boolean(), message: Type.String() }),
          ...ErrorResponses,
        },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const a = find(user, request.params.agent, 'toggle_service');
      if (!can(user, 'toggle_service', a.path))
        throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `Permission 'toggle_service' is required on ${a.path}`);
      const next = reviewed({ ...a, is_enabled: request.query.enabled, updated_at: new Date().toISOString() });
      await agents.set(a.path, next);
      return {
        path: a.path,
        is_enabled: next.is_enabled,
        message: `Agent ${a.path} ${next.is_enabled ? 'enabled' : 'disabled'}`,
      };
    },
  );
}
