import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { forbidden, notFound } from '../../../core/errors.ts';
import type { UserContext } from '../auth/context.ts';
import { agentVisible, isAdmin, skillVisible } from '../catalog/access.ts';
import { normalizeAgentPath } from '../catalog/agent-input.ts';
import { currentUser, pathParam, visibleServer } from '../catalog/server-actions.ts';
import { ErrorBody, ErrorResponses } from '../catalog/shared-schemas.ts';
import { ScanService } from './service.ts';
import { splitList, type Subject } from './settings.ts';

const Summary = Type.Object(
  {
    path: Type.String(),
    kind: Type.String({ description: 'server | agent | skill' }),
    status: Type.String({ description: 'SAFE, UNSAFE (a critical or high finding) or SCAN_FAILED' }),
    is_safe: Type.Boolean(),
    scan_failed: Type.Boolean(),
    scan_timestamp: Type.String({ format: 'date-time' }),
    analyzers_used: Type.Array(Type.String()),
    critical: Type.Integer(),
    high: Type.Integer(),
    medium: Type.Integer(),
    low: Type.Integer(),
    errors: Type.Optional(Type.Array(Type.String())),
    blocked: Type.Optional(Type.Boolean({ description: 'True when this scan disabled the item (security-pending)' })),
    is_enabled: Type.Boolean({ description: 'The item after the scan' }),
  },
  { description: 'Rescan summary (spec 2.6)' },
);
const Report = Type.Object({}, { additionalProperties: true, description: 'Latest stored scan result (spec 2.6)' });
const Analyzers = Type.Object({
  analyzers: Type.Optional(
    Type.String({ description: 'Comma list of analyzers for this scan; default: the configured ones' }),
  ),
});
const Errors = { ...ErrorResponses, 501: ErrorBody, 503: ErrorBody };

function requireAdmin(user: UserContext, what: string): void {
  if (!isAdmin(user)) throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `${what} needs an administrator (spec 5.4)`);
}

/** Rescan and stored-result endpoints (spec 4.1, 4.6, 4.7): rescans are admin-only; results follow item access. */
export default async function scanRoutes(fastify: FastifyInstance, opts: { service: ScanService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const { service } = opts;
  const analyzersOf = (raw: string | undefined, kind: Subject): string[] | undefined => {
    if (raw === undefined) return undefined;
    const names = splitList(raw);
    service.analyzers.check(names, kind);
    return names.length ? names : undefined;
  };

  app.post(
    '/api/servers/:server/rescan',
    {
      schema: {
        tags: ['registry: servers'],
        summary: "Scan a server's tools now, store the result and block or unblock it as the scan says; admin only",
        params: Type.Object({ server: Type.String({ description: 'Server path without the leading slash' }) }),
        querystring: Analyzers,
        response: { 200: Summary, ...Errors },
      },
    },
    async (request) => {
      const user = currentUser(request);
      requireAdmin(user, 'Rescanning a server');
      const s = catalog.servers.require(pathParam(request.params.server));
      const d = await service.scanServer(s, analyzersOf(request.query.analyzers, 'server'));
      const after = await catalog.servers.patch(s.path, (r) => ScanService.applyRescan(r, d));
      return { ...d.summary, is_enabled: after.is_enabled };
    },
  );

  app.get(
    '/api/servers/:server/security-scan',
    {
      schema: {
        tags: ['registry: servers'],
        summary: 'The latest stored scan result of a server; admin or a caller with access to the server',
        params: Type.Object({ server: Type.String({ description: 'Server path without the leading slash' }) }),
        response: { 200: Report, ...Errors },
      },
    },
    async (request) => {
      const s = visibleServer(catalog, currentUser(request), pathParam(request.params.server));
      const r = await service.results.latest('server', s.path, s.proxy_pass_url);
      if (!r) throw notFound('SB_ERR_SCAN_NOT_FOUND', `${s.path} has not been scanned yet (POST .../rescan scans it)`);
      return r;
    },
  );

  app.post(
    '/api/agents/:agent/rescan',
    {
      schema: {
        tags: ['registry: agents'],
        summary: "Scan an agent's card now, store the result and block or unblock it; admin only",
        params: Type.Object({ agent: Type.String({ description: 'Agent path without the leading slash' }) }),
        querystring: Analyzers,
        response: { 200: Summary, ...Errors },
      },
    },
    async (request) => {
      requireAdmin(currentUser(request), 'Rescanning an agent');
      const path = normalizeAgentPath(request.params.agent);
      const a = catalog.agents.index.get(path);
      if (!a) throw notFound('SB_ERR_REGISTRY_AGENT_NOT_FOUND', `No agent is registered at ${path}`);
      const d = await service.scanAgent(a, analyzersOf(request.query.analyzers, 'agent'));
      const next = await catalog.agents.index.lock(path, async () => {
        const current = catalog.agents.index.get(path) ?? a;
        const updated = { ...ScanService.applyRescan(current, d), updated_at: new Date().toISOString() };
        await catalog.agents.index.set(path, updated);
        return updated;
      });
      return { ...d.summary, is_enabled: next.is_enabled };
    },
  );

  for (const prefix of ['/api/skills', '/api/skills/skills']) {
    const Param = Type.Object({ name: Type.String({ description: 'Skill name' }) });
    app.post(
      `${prefix}/:name/rescan`,
      {
        schema: {
          tags: ['registry: skills'],
          summary:
            'Scan a skill now (static analysis of SKILL.md), store the result and block or unblock it; admin only',
          params: Param,
          querystring: Analyzers,
          response: { 200: Summary, ...Errors },
        },
      },
      async (request) => {
        requireAdmin(currentUser(request), 'Rescanning a skill');
        const path = `/skills/${request.params.name}`;
        const k = catalog.skills.index.get(path);
        if (!k) throw notFound('SB_ERR_REGISTRY_SKILL_NOT_FOUND', `No skill named ${request.params.name}`);
        const d = await service.scanSkill(k, analyzersOf(request.query.analyzers, 'skill'));
        const next = await catalog.skills.index.lock(path, async () => {
          const current = catalog.skills.index.get(path) ?? k;
          const updated = { ...ScanService.applyRescan(current, d), updated_at: new Date().toISOString() };
          await catalog.skills.index.set(path, updated);
          return updated;
        });
        return { ...d.summary, is_enabled: next.is_enabled };
      },
    );

    app.get(
      `${prefix}/:name/security-scan`,
      {
        schema: {
          tags: ['registry: skills'],
          summary: 'The latest stored scan result of a skill; admin or a caller with access to the skill',
          params: Param,
          response: { 200: Report, ...Errors },
        },
      },
      async (request) => {
        const user = currentUser(request);
        const path = `/skills/${request.params.name}`;
        const k = catalog.skills.index.get(path);
        if (!k) throw notFound('SB_ERR_REGISTRY_SKILL_NOT_FOUND', `No skill named ${request.params.name}`);
        if (!skillVisible(user, k))
          throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `You do not have access to skill ${path}`);
        const r = await service.results.latest('skill', path, path);
        if (!r) throw notFound('SB_ERR_SCAN_NOT_FOUND', `${path} has not been scanned yet (POST .../rescan scans it)`);
        return r;
      },
    );
  }

  // Agents' stored results are read by admins and callers who see the agent, like servers and skills.
  app.get(
    '/api/agents/:agent/security-scan',
    {
      schema: {
        tags: ['registry: agents'],
        summary: 'The latest stored scan result of an agent; admin or a caller with access to the agent',
        params: Type.Object({ agent: Type.String({ description: 'Agent path without the leading slash' }) }),
        response: { 200: Report, ...Errors },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const path = normalizeAgentPath(request.params.agent);
      const a = catalog.agents.index.get(path);
      if (!a) throw notFound('SB_ERR_REGISTRY_AGENT_NOT_FOUND', `No agent is registered at ${path}`);
      if (!agentVisible(user, a))
        throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `You do not have access to agent ${path}`);
      const r = await service.results.latest('agent', path, path);
      if (!r) throw notFound('SB_ERR_SCAN_NOT_FOUND', `${path} has not been scanned yet (POST .../rescan scans it)`);
      return r;
    },
  );
}
