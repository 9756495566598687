import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest } from '../../../core/errors.ts';
import { mayReadHeaders, requireCan, requireCredentialRight } from './access.ts';
import { showBackend } from './context.ts';
import { dashboardHtml, editFormHtml, sessionCsrf } from './html.ts';
import {
  currentUser,
  pathParam,
  refuseBlockedBackends,
  registerServer,
  registrationSummary,
  visibleServer,
} from './server-actions.ts';
import { parseBool, parseServerFields, ServerBody, type ServerBodyT } from './server-input.ts';
import { ServerListCache, visibleServers } from './server-list.ts';
import { ServerDetail, serverDetail, ServerSummary, serverSummaryJson, ToolSchema } from './server-views.ts';
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

/** Edit-form posts: descriptive fields only unless the form carries credential fields (then the 5.3 rights apply). */
export async function editServer(
  app: FastifyInstance,
  user: ReturnType<typeof currentUser>,
  raw: string,
  body: ServerBodyT,
  via: string,
  required: Array<'name' | 'proxy_pass_url'> = [],
): Promise<ServerRecord> {
  const path = pathParam(raw);
  app.catalog.servers.require(path);
  requireCan(user, 'modify_service', path);
  const { path: _p, ...fields } = parseServerFields(body, required);
  const credTouched = ['auth_scheme', 'auth_credential', 'auth_header_name'].some(
    (k) => body[k] !== undefined && body[k] !== '',
  );
  if (credTouched) requireCredentialRight(user, path);
  await refuseBlockedBackends(app.catalog, fields);
  return app.catalog.servers.update(path, fields, credTouched ? body : undefined, user, via);
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

  app.post(
    '/api/register',
    {
      schema: {
        tags,
        summary: 'Register a server from the UI form; 400 when it exists; needs register_service',
        body: ServerBody,
        response: {
          201: Type.Object({
            message: Type.String(),
            path: Type.String(),
            server_name: Type.String(),
            is_enabled: Type.Boolean(),
            auth_scheme: Type.String(),
            auth_credential_encrypted: Type.Boolean(),
          }),
          ...ErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { record, created } = await registerServer(catalog, currentUser(request), request.body, {
        via: 'POST /api/register',
        existsStatus: 400,
      });
      return reply.status(201).send(registrationSummary(record, created));
    },
  );

  app.get(
    '/api/edit/:server',
    {
      schema: { tags, summary: 'Edit form (HTML); needs modify_service', params: ServerParam },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const path = pathParam(request.params.server);
      const s = catalog.servers.require(path);
      requireCan(user, 'modify_service', path);
      reply.type('text/html; charset=utf-8');
      return editFormHtml(s, `/api/edit/${s.path.slice(1)}`, sessionCsrf(request));
    },
  );

  app.post(
    '/api/edit/:server',
    {
      schema: {
        tags,
        summary: 'Save the edit form, then 303 to the dashboard; needs modify_service',
        params: ServerParam,
        body: ServerBody,
      },
    },
    async (request, reply) => {
      await editServer(fastify, currentUser(request), request.params.server, request.body, 'POST /api/edit/{path}');
      return reply.redirect('/api/', 303);
    },
  );

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
