import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest } from '../../../core/errors.ts';
import { mayReadHeaders, requireCan } from './access.ts';
import { showBackend } from './context.ts';
import { dashboardHtml } from './html.ts';
import { currentUser, pathParam, visibleServer } from './server-actions.ts';
import { parseBool } from './server-input.ts';
import { ServerListCache, visibleServers } from './server-list.ts';
import { ServerDetail, serverDetail, ServerSummary, serverSummaryJson, ToolSchema } from './server-views.ts';
import { editFormRoutes, registerFormRoute } from './form-routes.ts';
import { ErrorResponses } from './shared-schemas.ts';
import type { ServerRecord } from './records.ts';

/** Server management, UI family (spec 4.3): JSON endpoints and minimal HTML until the web-UI issue. */

const tags = ['registry: ui'];
const ServerParam = Type.Object({ server: Type.String({ description: 'Server path without the leading slash' }) });
const DetailParam = Type.Object({
  server: Type.String({ description: "Server path without the leading slash, or 'all'" }),
});
const ToggleResult = Type.Object({
  path: Type.String(),
  service_path: Type.String(),
  is_enabled: Type.Boolean(),
  new_enabled_state: Type.Boolean(),
  message: Type.String(),
});
const ToolWithServer = Type.Composite([ToolSchema, Type.Object({ server_path: Type.String() })]);

export const REGISTER_FORM_FIELDS = [
  'name',
  'description',
  'path',
  'proxy_pass_url',
  'tags',
  'num_tools',
  'num_stars',
  'is_python',
  'license',
];

/** Shared by /api/toggle (form `enabled` true/false) and the older /toggle (`enabled=on` or absent). */
export async function toggleServer(
  app: FastifyInstance,
  user: ReturnType<typeof currentUser>,
  raw: string,
  enabled: boolean,
) {
  const path = pathParam(raw);
  app.catalog.servers.require(path);
  requireCan(user, 'toggle_service', path);
  const s = await app.catalog.servers.setEnabled(path, enabled);
  return {
    path,
    service_path: path,
    is_enabled: s.is_enabled,
    new_enabled_state: s.is_enabled,
    message: `Service ${path} ${s.is_enabled ? 'enabled' : 'disabled'}`,
  };
}

export default async function uiRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const listCache = new ServerListCache(serverSummaryJson);

  app.get(
    '/api/servers',
    {
      schema: {
        tags,
        summary: 'Servers the caller may see',
        querystring: Type.Object({ query: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ servers: Type.Array(ServerSummary) }), ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      // Built from per-record JSON and cached per visibility until the next write: listing
      // 10,000 servers costs a lookup, not 10,000 serialisations. Fields are serverSummary's, as the schema says.
      return reply
        .type('application/json; charset=utf-8')
        .send(listCache.body(catalog, user, request.query.query) as never);
    },
  );

  app.get(
    '/api/',
    {
      schema: {
        tags,
        summary: 'Dashboard (minimal HTML until the web-UI issue)',
        querystring: Type.Object({ query: Type.Optional(Type.String()) }),
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      reply.type('text/html; charset=utf-8');
      return dashboardHtml(user, visibleServers(catalog, user, request.query.query), request.query.query ?? '');
    },
  );

  app.post(
    '/api/toggle/:server',
    {
      schema: {
        tags,
        summary: 'Enable or disable a server (form enabled=true|false); needs toggle_service',
        params: ServerParam,
        body: Type.Object({
          enabled: Type.Optional(Type.Union([Type.String(), Type.Boolean()])),
          csrf_token: Type.Optional(Type.String()),
        }),
        response: { 200: ToggleResult, ...ErrorResponses },
      },
    },
    async (request) => {
      const enabled = parseBool(request.body?.enabled, 'enabled');
      if (enabled === undefined)
        throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', 'enabled is required: true or false');
      return toggleServer(fastify, currentUser(request), request.params.server, enabled);
    },
  );

  registerFormRoute(fastify, '/api/register', {
    tags,
    summary: 'Register a server from the UI form; 400 when it exists; needs register_service',
  });
  editFormRoutes(fastify, '/api', {
    tags,
    formSummary: 'Edit form (HTML); needs modify_service',
    saveSummary: 'Save the edit form, then 303 to the dashboard; needs modify_service',
  });

  app.get(
    '/api/server_details/:server',
    {
      schema: {
        tags,
        summary: "A server's details, or every visible server's keyed by path ('all')",
        params: DetailParam,
        response: { 200: Type.Union([ServerDetail, Type.Record(Type.String(), ServerDetail)]), ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const show = showBackend(catalog, user);
      const view = (s: ServerRecord) =>
        serverDetail(s, {
          showBackend: show,
          stars: catalog.ratings.average(`server:${s.path}`),
          revealHeaders: mayReadHeaders(user, s.path),
        });
      if (request.params.server === 'all')
        return Object.fromEntries(visibleServers(catalog, user).map((s) => [s.path, view(s)]));
      return view(visibleServer(catalog, user, pathParam(request.params.server)));
    },
  );

  app.get(
    '/api/tools/:server',
    {
      schema: {
        tags,
        summary: "Tools of a server, or of every visible enabled server ('all'); 400 for a disabled server",
        params: DetailParam,
        response: { 200: Type.Object({ tools: Type.Array(ToolWithServer) }), ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const withServer = (s: ServerRecord) => s.tools.map((t) => ({ ...t, server_path: s.path }));
      if (request.params.server === 'all')
        return {
          tools: visibleServers(catalog, user)
            .filter((s) => s.is_enabled)
            .flatMap(withServer),
        };
      const s = visibleServer(catalog, user, pathParam(request.params.server));
      if (!s.is_enabled)
        throw badRequest(
          'SB_ERR_REGISTRY_SERVICE_DISABLED',
          `Service ${s.path} is disabled; enable it to read its tools`,
        );
      return { tools: withServer(s) };
    },
  );
}
