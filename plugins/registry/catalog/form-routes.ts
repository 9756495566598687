import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { requireCan, requireCredentialRight } from './access.ts';
import { editFormHtml, sessionCsrf } from './html.ts';
import type { ServerRecord } from './records.ts';
import {
  currentUser,
  pathParam,
  refuseBlockedBackends,
  registerServer,
  registrationSummary,
} from './server-actions.ts';
import { parseServerFields, ServerBody, type ServerBodyT } from './server-input.ts';
import { ErrorResponses } from './shared-schemas.ts';

/**
 * The server register and edit forms, served by both the UI family (/api/register, /api/edit) and the
 * older unprefixed one (/register, /edit): the same handling, with each family's url, tags and summaries.
 */

const ServerParam = Type.Object({ server: Type.String({ description: 'Server path without the leading slash' }) });

type Required = Array<'name' | 'proxy_pass_url'>;

/** Edit-form posts: descriptive fields only unless the form carries credential fields (then the 5.3 rights apply). */
export async function editServer(
  app: FastifyInstance,
  user: ReturnType<typeof currentUser>,
  raw: string,
  body: ServerBodyT,
  via: string,
  required: Required = [],
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

/** POST `url`: register a server from the form; 201 with the summary, 400 when it exists. */
export function registerFormRoute(
  fastify: FastifyInstance,
  url: '/register' | '/api/register',
  doc: { tags: string[]; summary: string },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    url,
    {
      schema: {
        ...doc,
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
      const { record, created } = await registerServer(fastify.catalog, currentUser(request), request.body, {
        via: `POST ${url}`,
        existsStatus: 400,
      });
      return reply.status(201).send(registrationSummary(record, created));
    },
  );
}

/** GET `prefix/edit/:server` serves the edit form (HTML); POST saves it and answers 303 to the dashboard. */
export function editFormRoutes(
  fastify: FastifyInstance,
  prefix: '' | '/api',
  doc: { tags: string[]; formSummary: string; saveSummary: string; required?: Required },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  app.get(
    `${prefix}/edit/:server`,
    { schema: { tags: doc.tags, summary: doc.formSummary, params: ServerParam } },
    async (request, reply) => {
      const user = currentUser(request);
      const path = pathParam(request.params.server);
      const s = catalog.servers.require(path);
      requireCan(user, 'modify_service', path);
      reply.type('text/html; charset=utf-8');
      return editFormHtml(s, `${prefix}/edit/${s.path.slice(1)}`, sessionCsrf(request));
    },
  );
  app.post(
    `${prefix}/edit/:server`,
    { schema: { tags: doc.tags, summary: doc.saveSummary, params: ServerParam, body: ServerBody } },
    async (request, reply) => {
      const user = currentUser(request);
      await editServer(fastify, user, request.params.server, request.body, `POST ${prefix}/edit/{path}`, doc.required);
      return reply.redirect('/api/', 303);
    },
  );
}
