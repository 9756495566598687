import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest, forbidden, SwitchboardError } from '../../../core/errors.ts';
import { can, isAdmin, mayReadHeaders, requireCan, requireCredentialRight } from './access.ts';
import { showBackend } from './context.ts';
import { RatingBody, RatingView } from './ratings.ts';
import {
  currentUser,
  pathParam,
  refuseBlockedBackends,
  registerServer,
  registrationSummary,
  visibleServer,
} from './server-actions.ts';
import { parseBool, parseServerFields, parseTags, ServerBody } from './server-input.ts';
import { ServerDetail, serverDetail, versionsOf } from './server-views.ts';
import { ErrorResponses, Message, GroupsResult } from './shared-schemas.ts';
import { registryAuthOf } from '../auth/index.ts';
import { grantServerToGroups, revokeServerFromGroups } from './server-scopes.ts';

/** Programmatic server management (spec 4.6; health, refresh, rescan and security-scan belong to later issues). */

const tags = ['registry: servers'];
const ServerParam = Type.Object({ server: Type.String({ description: 'Server path without the leading slash' }) });
const Registration = Type.Object({
  message: Type.String(),
  path: Type.String(),
  server_name: Type.String(),
  name: Type.String(),
  version: Type.Optional(Type.String()),
  is_enabled: Type.Boolean(),
  health_status: Type.String(),
  auth_scheme: Type.String(),
  auth_header_name: Type.Union([Type.String(), Type.Null()]),
  auth_credential_encrypted: Type.Boolean(),
  tags: Type.Array(Type.String()),
  security_scan: Type.Optional(
    Type.Object({}, { additionalProperties: true, description: 'Scan summary, when a scanner is configured' }),
  ),
});
const CredentialBody = Type.Object({
  auth_scheme: Type.String({ description: 'none | bearer | api_key' }),
  auth_credential: Type.Optional(Type.String({ description: 'Required unless auth_scheme is none; never returned' })),
  auth_header_name: Type.Optional(
    Type.String({ description: 'Defaults: Authorization (bearer), X-API-Key (api_key)' }),
  ),
});
const CredentialResult = Type.Object({
  message: Type.String(),
  path: Type.String(),
  auth_scheme: Type.String(),
  auth_header_name: Type.Union([Type.String(), Type.Null()]),
  auth_credential_encrypted: Type.Boolean(),
});
const ToggleResult = Type.Object({ path: Type.String(), is_enabled: Type.Boolean(), message: Type.String() });
const GroupsBody = Type.Object({
  server_name: Type.String(),
  group_names: Type.Union([Type.String(), Type.Array(Type.String())]),
  csrf_token: Type.Optional(Type.String()),
});
const VersionBody = Type.Object({
  version: Type.String({ minLength: 1 }),
  proxy_pass_url: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  set_as_default: Type.Optional(
    Type.Boolean({
      description: 'Serve this version (endpoint and fields); default false: the version is only listed',
    }),
  ),
});
const VersionItem = Type.Object({
  version: Type.String(),
  status: Type.String(),
  registered_at: Type.String(),
  is_latest: Type.Boolean(),
  is_default: Type.Boolean(),
});

export default async function serversApi(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const { scopes } = registryAuthOf(fastify);

  app.post(
    '/api/servers/register',
    {
      schema: {
        tags,
        summary: 'Register an MCP server (form or JSON); needs register_service',
        body: ServerBody,
        response: { 201: Registration, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const { record, created, scan } = await registerServer(catalog, user, request.body, {
        via: 'POST /api/servers/register',
      });
      return reply.status(201).send(registrationSummary(record, created, scan));
    },
  );

  app.post(
    '/api/servers/toggle',
    {
      schema: {
        tags,
        summary: 'Enable or disable a server; needs toggle_service',
        body: Type.Object({
          path: Type.String(),
          new_state: Type.Union([Type.String(), Type.Boolean()]),
          csrf_token: Type.Optional(Type.String()),
        }),
        response: { 200: ToggleResult, ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const path = pathParam(request.body.path);
      const state = parseBool(request.body.new_state, 'new_state');
      if (state === undefined)
        throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', 'new_state is required: true or false');
      catalog.servers.require(path);
      requireCan(user, 'toggle_service', path);
      const s = await catalog.servers.setEnabled(path, state);
      return { path, is_enabled: s.is_enabled, message: `Service ${path} ${s.is_enabled ? 'enabled' : 'disabled'}` };
    },
  );

  for (const op of ['add', 'remove'] as const) {
    app.post(
      `/api/servers/groups/${op}`,
      {
        schema: {
          tags,
          summary: `${op === 'add' ? 'Add a server to' : 'Remove a server from'} groups (comma-separated group_names): members of a group with a scope document get (or lose) all its methods and tools; admin only`,
          body: GroupsBody,
          response: { 200: GroupsResult, ...ErrorResponses },
        },
      },
      async (request) => {
        const user = currentUser(request);
        const s = catalog.servers.findByName(request.body.server_name);
        if (!s)
          throw new SwitchboardError(
            404,
            'SB_ERR_REGISTRY_SERVER_NOT_FOUND',
            `No server named ${request.body.server_name}`,
          );
        // A group's scope document decides who may call the server: changing it is an admin's act, as on /api/internal/*.
        if (!isAdmin(user))
          throw forbidden(
            'SB_ERR_AUTH_ADMIN_REQUIRED',
            `Adding ${s.path} to groups or removing it changes who may call it; an administrator must do it`,
          );
        const groups = parseTags(request.body.group_names) ?? [];
        if (!groups.length)
          throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', 'group_names must name at least one group');
        const next = await catalog.servers.setGroups(s.path, op === 'add' ? groups : [], op === 'remove' ? groups : []);
        const scopesUpdated =
          op === 'add'
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

  app.get(
    '/api/servers/:server',
    {
      schema: {
        tags,
        summary: 'A server with tools, versions and health (never its credential)',
        params: ServerParam,
        response: { 200: ServerDetail, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      // GET /api/servers/register lands here (its POST is a fixed route): unless a server really lives at
      // /register, the caller meant the registration endpoint with the wrong method.
      if (request.params.server === 'register' && !catalog.servers.get('/register')) {
        return reply
          .code(405)
          .header('allow', 'POST')
          .send({
            detail: 'GET is not allowed on /api/servers/register; use POST to register a server',
            code: 'SB_ERR_METHOD_NOT_ALLOWED',
          } as never);
      }
      const s = visibleServer(catalog, user, pathParam(request.params.server));
      return serverDetail(s, {
        showBackend: showBackend(catalog, user),
        stars: catalog.ratings.average(`server:${s.path}`),
        revealHeaders: mayReadHeaders(user, s.path),
      });
    },
  );

  app.put(
    '/api/servers/:server',
    {
      schema: {
        tags,
        summary: 'Update a server (same fields as register); needs modify_service',
        params: ServerParam,
        body: ServerBody,
        response: { 200: ServerDetail, ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const path = pathParam(request.params.server);
      catalog.servers.require(path);
      requireCan(user, 'modify_service', path);
      const body = request.body;
      const fields = parseServerFields(body);
      if (fields.path && fields.path !== path)
        throw badRequest(
          'SB_ERR_REGISTRY_INVALID_PATH',
          `The path of a server cannot change (${path} -> ${fields.path}); register a new one`,
        );
      const credTouched = (['auth_scheme', 'auth_credential', 'auth_header_name'] as const).some(
        (k) => body[k] !== undefined && body[k] !== '',
      );
      if (credTouched) requireCredentialRight(user, path);
      await refuseBlockedBackends(catalog, fields);
      const s = await catalog.servers.update(
        path,
        fields,
        credTouched ? body : undefined,
        user,
        'PUT /api/servers/{path}',
      );
      return serverDetail(s, {
        showBackend: showBackend(catalog, user),
        stars: catalog.ratings.average(`server:${s.path}`),
        revealHeaders: mayReadHeaders(user, s.path),
      });
    },
  );

  const setCredential =
    (via: string) =>
    async (
      // One handler for two routes, so its types come from their shared schemas rather than from one route.
      request: FastifyRequest<{ Params: Static<typeof ServerParam>; Body: Static<typeof CredentialBody> }>,
    ) => {
      const user = currentUser(request);
      const path = pathParam(request.params.server);
      catalog.servers.require(path);
      requireCredentialRight(user, path);
      const s = await catalog.servers.setCredential(path, request.body, user, via);
      return {
        message:
          s.auth_scheme === 'none' ? `Backend credential of ${path} removed` : `Backend credential of ${path} updated`,
        path,
        auth_scheme: s.auth_scheme,
        auth_header_name: s.auth_header_name ?? null,
        auth_credential_encrypted: s.auth_credential_encrypted,
      };
    };
  app.patch(
    '/api/servers/:server/auth-credential',
    {
      schema: {
        tags,
        summary: 'Set, rotate or remove the backend credential; needs register_service or modify_service',
        params: ServerParam,
        body: CredentialBody,
        response: { 200: CredentialResult, ...ErrorResponses },
      },
    },
    setCredential('PATCH /api/servers/{path}/auth-credential'),
  );
  app.put(
    '/api/servers/:server/credentials',
    {
      schema: {
        tags,
        summary: 'Set, rotate or remove the backend credential (same as PATCH auth-credential)',
        params: ServerParam,
        body: CredentialBody,
        response: { 200: CredentialResult, ...ErrorResponses },
      },
    },
    setCredential('PUT /api/servers/{path}/credentials'),
  );

  app.delete(
    '/api/servers/:server',
    {
      schema: {
        tags,
        summary: 'Remove a server; admin or modify_service',
        params: ServerParam,
        response: { 200: Message, ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const path = pathParam(request.params.server);
      catalog.servers.require(path);
      if (!isAdmin(user) && !can(user, 'modify_service', path))
        throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `Removing ${path} needs modify_service on it`);
      await catalog.servers.delete(path);
      await catalog.ratings.remove(`server:${path}`);
      await scopes.removeServerEverywhere(path);
      return { message: `Service ${path} removed`, path };
    },
  );

  app.get(
    '/api/servers/:server/rating',
    {
      schema: {
        tags,
        summary: 'Ratings of a server',
        params: ServerParam,
        response: { 200: RatingView, ...ErrorResponses },
      },
    },
    async (request) => {
      const s = visibleServer(catalog, currentUser(request), pathParam(request.params.server));
      return catalog.ratings.view(`server:${s.path}`);
    },
  );

  app.post(
    '/api/servers/:server/rating',
    {
      schema: {
        tags,
        summary: 'Rate a server 1-5 (one rating per user; a new one replaces it)',
        params: ServerParam,
        body: RatingBody,
        response: { 201: RatingView, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const s = visibleServer(catalog, user, pathParam(request.params.server));
      const { rating, comment } = request.body;
      if (rating < 1 || rating > 5)
        throw badRequest('SB_ERR_REGISTRY_INVALID_RATING', `rating must be an integer from 1 to 5, not ${rating}`);
      return reply.status(201).send(await catalog.ratings.rate(`server:${s.path}`, user.username, rating, comment));
    },
  );

  app.get(
    '/api/servers/:server/versions',
    {
      schema: {
        tags,
        summary: 'Versions of a server, newest last',
        params: ServerParam,
        response: { 200: Type.Array(VersionItem), ...ErrorResponses },
      },
    },
    async (request) => versionsOf(visibleServer(catalog, currentUser(request), pathParam(request.params.server))),
  );

  app.post(
    '/api/servers/:server/versions',
    {
      schema: {
        tags,
        summary:
          'Add a version (served only with set_as_default, which also switches to a listed version); 409 when the version exists; needs modify_service',
        params: ServerParam,
        body: VersionBody,
        response: { 201: Type.Array(VersionItem), ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const path = pathParam(request.params.server);
      const s = catalog.servers.require(path);
      requireCan(user, 'modify_service', path);
      const { version, set_as_default } = request.body;
      if (s.versions.some((v) => v.version === version)) {
        if (!set_as_default || Object.keys(request.body).some((k) => !['version', 'set_as_default'].includes(k))) {
          throw new SwitchboardError(
            409,
            'SB_ERR_REGISTRY_VERSION_EXISTS',
            `Server ${path} already has version ${version} (send only version and set_as_default: true to serve it)`,
          );
        }
        const switched = await catalog.servers.setDefaultVersion(path, version);
        return reply.status(201).send(versionsOf(switched!));
      }
      const fields = parseServerFields(request.body);
      await refuseBlockedBackends(catalog, fields);
      if (!set_as_default) {
        const listed = await catalog.servers.addVersion(path, {
          version,
          status: fields.status ?? 'active',
          proxy_pass_url: fields.proxy_pass_url ?? s.proxy_pass_url,
        });
        return reply.status(201).send(versionsOf(listed));
      }
      const next = await catalog.servers.update(
        path,
        { ...fields, version },
        undefined,
        user,
        'POST /api/servers/{path}/versions',
      );
      return reply.status(201).send(versionsOf(next));
    },
  );
}
