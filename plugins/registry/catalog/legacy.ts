import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireCan } from './access.ts';
import { editFormHtml, sessionCsrf } from './html.ts';
import { currentUser, pathParam, registerServer, registrationSummary } from './server-actions.ts';
import { ServerBody } from './server-input.ts';
import { ErrorResponses } from './shared-schemas.ts';
import { editServer, toggleServer } from './ui.ts';

/** The older unprefixed family (spec 4.9); /api/server_details and /api/tools are shared with the UI family. */

const tags = ['registry: older paths'];
const ServerParam = Type.Object({ server: Type.String({ description: 'Server path without the leading slash' }) });

export default async function legacyRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;

  app.post(
    '/register',
    {
      schema: {
        tags,
        summary: 'Register a server (urlencoded form); 201 JSON; 400 when it exists',
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
        via: 'POST /register',
        existsStatus: 400,
      });
      return reply.status(201).send(registrationSummary(record, created));
    },
  );

  app.post(
    '/toggle/:server',
    {
      schema: {
        tags,
        summary: 'Form enabled=on enables; without it the server is disabled',
        params: ServerParam,
        body: Type.Optional(
          Type.Object({ enabled: Type.Optional(Type.String()), csrf_token: Type.Optional(Type.String()) }),
        ),
        response: {
          200: Type.Object({
            path: Type.String(),
            service_path: Type.String(),
            is_enabled: Type.Boolean(),
            new_enabled_state: Type.Boolean(),
            message: Type.String(),
          }),
          ...ErrorResponses,
        },
      },
    },
    async (request) => {
      const raw = request.body?.enabled;
      return toggleServer(
        fastify,
        currentUser(request),
        request.params.server,
        raw !== undefined && ['on', 'true', '1'].includes(raw.toLowerCase()),
      );
    },
  );

  app.get(
    '/edit/:server',
    { schema: { tags, summary: 'Edit form (HTML)', params: ServerParam } },
    async (request, reply) => {
      const user = currentUser(request);
      const path = pathParam(request.params.server);
      const s = catalog.servers.require(path);
      requireCan(user, 'modify_service', path);
      reply.type('text/html; charset=utf-8');
      return editFormHtml(s, `/edit/${s.path.slice(1)}`, sessionCsrf(request));
    },
  );

  app.post(
    '/edit/:server',
    {
      schema: {
        tags,
        summary: 'Save the edit form (name and proxy_pass_url required); redirects to the main page',
        params: ServerParam,
        body: ServerBody,
      },
    },
    async (request, reply) => {
      await editServer(fastify, currentUser(request), request.params.server, request.body, 'POST /edit/{path}', [
        'name',
        'proxy_pass_url',
      ]);
      return reply.redirect('/api/', 303);
    },
  );
}
