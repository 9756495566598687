import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest, notFound } from '../../../core/errors.ts';
import { requireBasicAdmin } from './access.ts';
import { parseBool, parseTags, ServerBody } from './server-input.ts';
import { pathParam, registerServer, registrationSummary } from './server-actions.ts';
import { ErrorResponses, GroupsResult } from './shared-schemas.ts';
import { registryAuthOf } from '../auth/index.ts';
import { grantServerToGroups, revokeServerFromGroups } from './server-scopes.ts';

/**
 * Internal admin endpoints (spec 4.5): HTTP Basic, or the signed-in admin's
 * session cookie with its CSRF token (requireBasicAdmin). healthcheck belongs to
 * the health issue; create/delete/list-groups to registry auth.
 */

const tags = ['registry: internal'];
const Service = Type.Object({
  path: Type.String(),
  server_name: Type.String(),
  description: Type.String(),
  proxy_pass_url: Type.String(),
  is_enabled: Type.Boolean(),
  health_status: Type.String(),
  last_checked_iso: Type.Union([Type.String(), Type.Null()]),
  num_tools: Type.Integer(),
  tags: Type.Array(Type.String()),
  groups: Type.Array(Type.String()),
  auth_scheme: Type.String(),
  auth_credential_encrypted: Type.Boolean(),
});
const PathForm = Type.Object({ service_path: Type.String({ minLength: 1 }) });
const GroupsForm = Type.Object({
  server_name: Type.String({ minLength: 1 }),
  group_names: Type.String({ minLength: 1, description: 'Comma-separated' }),
});

export default async function internalRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const { scopes } = registryAuthOf(fastify);

  app.post(
    '/api/internal/register',
    {
      schema: {
        tags,
        summary: 'Register (overwrite=true replaces); auto-enables; 201 or 409',
        body: ServerBody,
        response: {
          201: Type.Object({
            message: Type.String(),
            path: Type.String(),
            server_name: Type.String(),
            is_enabled: Type.Boolean(),
            auth_scheme: Type.String(),
            auth_header_name: Type.Union([Type.String(), Type.Null()]),
            auth_credential_encrypted: Type.Boolean(),
            scopes_updated: Type.Array(Type.String(), {
              description: 'Scopes marked auto_add_registered_servers that now grant this server',
            }),
          }),
          ...ErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const admin = requireBasicAdmin(request);
      const body = request.body;
      const overwrite = parseBool(body.overwrite, 'overwrite') ?? false;
      const { record, created } = await registerServer(catalog, admin, body, {
        via: 'POST /api/internal/register',
        overwrite,
        checkPermission: false,
      });
      const enabled =
        record.is_enabled || record.tags.includes('security-pending')
          ? record
          : await catalog.servers.setEnabled(record.path, true);
      // Spec 4.5: this endpoint also updates the scope definitions (the scopes that take every internally registered server).
      const scopesUpdated = scopes.autoAddScopes();
      await scopes.addServerToGroups(record.path, scopesUpdated);
      return reply.status(201).send({ ...registrationSummary(enabled, created), scopes_updated: scopesUpdated });
    },
  );

  app.post(
    '/api/internal/remove',
    {
      schema: {
        tags,
        summary: 'Remove a server; 404 when absent',
        body: PathForm,
        response: { 200: Type.Object({ message: Type.String(), service_path: Type.String() }), ...ErrorResponses },
      },
    },
    async (request) => {
      requireBasicAdmin(request);
      const path = pathParam(request.body.service_path);
      if (!catalog.servers.get(path))
        throw notFound('SB_ERR_REGISTRY_SERVER_NOT_FOUND', `No server is registered at ${path}`);
      await catalog.servers.delete(path);
      await catalog.ratings.remove(`server:${path}`);
      await scopes.removeServerEverywhere(path);
      return { message: `Service ${path} removed`, service_path: path };
    },
  );

  app.post(
    '/api/internal/toggle',
    {
      schema: {
        tags,
        summary: 'Flip a server between enabled and disabled',
        body: PathForm,
        response: {
          200: Type.Object({ service_path: Type.String(), is_enabled: Type.Boolean(), message: Type.String() }),
          ...ErrorResponses,
        },
      },
    },
    async (request) => {
      requireBasicAdmin(request);
      const path = pathParam(request.body.service_path);
      const s = catalog.servers.require(path);
      const next = await catalog.servers.setEnabled(path, !s.is_enabled);
      return {
        service_path: path,
        is_enabled: next.is_enabled,
        message: `Service ${path} ${next.is_enabled ? 'enabled' : 'disabled'}`,
      };
    },
  );

  app.get(
    '/api/internal/list',
    {
      schema: {
        tags,
        summary: 'Every server with its health',
        response: { 200: Type.Object({ services: Type.Array(Service), total: Type.Integer() }), ...ErrorResponses },
      },
    },
    async (request) => {
      requireBasicAdmin(request);
      const services = catalog.servers.list().map((s) => ({ ...s, num_tools: s.tools.length || s.num_tools }));
      return { services, total: services.length };
    },
  );

  for (const op of ['add-to-groups', 'remove-from-groups'] as const) {
    app.post(
      `/api/internal/${op}`,
      {
        schema: {
          tags,
          summary: op === 'add-to-groups' ? 'Add a server to groups' : 'Remove a server from groups',
          body: GroupsForm,
          response: { 200: GroupsResult, ...ErrorResponses },
        },
      },
      async (request) => {
        requireBasicAdmin(request);
        const s = catalog.servers.findByName(request.body.server_name);
        if (!s) throw notFound('SB_ERR_REGISTRY_SERVER_NOT_FOUND', `No server named ${request.body.server_name}`);
        const groups = parseTags(request.body.group_names) ?? [];
        if (!groups.length)
          throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', 'group_names must name at least one group');
        const next = await catalog.servers.setGroups(
          s.path,
          op === 'add-to-groups' ? groups : [],
          op === 'remove-from-groups' ? groups : [],
        );
        const scopesUpdated =
          op === 'add-to-groups'
            ? await grantServerToGroups(scopes, s.path, groups)
            : await revokeServerFromGroups(scopes, s.path, groups);
        return {
          message: `Groups of ${s.path} updated`,
          path: s.path,
          server_name: s.server_name,
          groups: next.groups,
          scopes_updated: scopesUpdated,
        };
      },
    );
  }
}
