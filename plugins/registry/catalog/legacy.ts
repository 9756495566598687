import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { editFormRoutes, registerFormRoute } from './form-routes.ts';
import { currentUser } from './server-actions.ts';
import { ErrorResponses } from './shared-schemas.ts';
import { toggleServer } from './ui.ts';

/** The older unprefixed family (spec 4.9); /api/server_details and /api/tools are shared with the UI family. */

const tags = ['registry: older paths'];
const ServerParam = Type.Object({ server: Type.String({ description: 'Server path without the leading slash' }) });

export default async function legacyRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  registerFormRoute(fastify, '/register', {
    tags,
    summary: 'Register a server (urlencoded form); 201 JSON; 400 when it exists',
  });

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

  editFormRoutes(fastify, '', {
    tags,
    formSummary: 'Edit form (HTML)',
    saveSummary: 'Save the edit form (name and proxy_pass_url required); redirects to the main page',
    required: ['name', 'proxy_pass_url'],
  });
}
