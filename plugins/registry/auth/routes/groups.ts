import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { conflict, forbidden, notFound } from '../../../../core/errors.ts';
import { requireBasicAdmin } from '../access.ts';

interface GroupRecord {
  name: string;
  description: string;
  created_at: string;
  created_by: string;
}

const ErrorBody = Type.Object({ detail: Type.Unknown(), code: Type.String() });
const Bool = Type.Boolean({ default: false });
const CreateBody = Type.Object({
  group_name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }),
  description: Type.Optional(Type.String({ maxLength: 500 })),
  create_in_idp: Type.Optional(Bool),
  csrf_token: Type.Optional(Type.String()),
});
const DeleteBody = Type.Object({
  group_name: Type.String({ minLength: 1, maxLength: 128 }),
  delete_from_idp: Type.Optional(Bool),
  force: Type.Optional(Bool),
  csrf_token: Type.Optional(Type.String()),
});
const GroupInfo = Type.Object({
  name: Type.String(),
  description: Type.String(),
  system: Type.Boolean(),
  /** A scope document is named after the group (it is what add-to-groups edits). */
  has_scope: Type.Boolean(),
  /** Scope documents whose group_mappings list this group. */
  mapped_scopes: Type.Array(Type.String()),
  server_count: Type.Integer(),
  created_at: Type.Optional(Type.String()),
  idp_synced: Type.Boolean(),
});

/**
 * Groups (internal admin: HTTP Basic, or the console's admin session). A group is a record plus a scope
 * document of the same name mapped to it, so adding servers to the group
 * grants its members those servers. Groups named by scope files are system
 * groups. Syncing with the IdP's admin API is not implemented: the flags are
 * accepted and the answer says `idp_synced: false`.
 */
export default async function groupRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { scopes } = app.registryAuth;
  const groups = app.sb.store.collection<GroupRecord>('registry_groups');

  app.post(
    '/api/internal/create-group',
    {
      schema: {
        tags: ['internal'],
        summary: 'Create a group and its scope document',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: CreateBody,
        response: {
          201: Type.Object({ message: Type.String(), group: GroupInfo }),
          401: ErrorBody,
          403: ErrorBody,
          409: ErrorBody,
          422: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const admin = requireBasicAdmin(request);
      const { group_name: name, description = '' } = request.body;
      if ((await groups.get(name)) || scopes.has(name))
        throw conflict('SB_ERR_GROUP_EXISTS', `Group '${name}' already exists`);
      const rec: GroupRecord = { name, description, created_at: new Date().toISOString(), created_by: admin.username };
      await groups.set(name, rec);
      await scopes.put({ _id: name, description, group_mappings: [name], server_access: [], ui_permissions: {} });
      request.log.info({ group: name, by: admin.username }, 'group created');
      return reply.status(201).send({
        message: `Group '${name}' created`,
        group: {
          name,
          description,
          system: false,
          has_scope: true,
          mapped_scopes: [name],
          server_count: 0,
          created_at: rec.created_at,
          idp_synced: false,
        },
      });
    },
  );

  app.post(
    '/api/internal/delete-group',
    {
      schema: {
        tags: ['internal'],
        summary: 'Delete a group and its scope document (system groups cannot be deleted)',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: DeleteBody,
        response: {
          200: Type.Object({ message: Type.String(), group_name: Type.String() }),
          401: ErrorBody,
          403: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
        },
      },
    },
    async (request) => {
      const admin = requireBasicAdmin(request);
      const { group_name: name, force = false } = request.body;
      if (scopes.isSystemGroup(name))
        throw forbidden(
          'SB_ERR_GROUP_SYSTEM',
          `'${name}' is a system group (defined in scopes/) and cannot be deleted`,
        );
      const rec = await groups.get(name);
      const doc = scopes.get(name);
      if (!rec && !doc) throw notFound('SB_ERR_GROUP_NOT_FOUND', `Group '${name}' does not exist`);
      const servers = doc?.server_access.filter((r) => 'server' in r).length ?? 0;
      if (servers > 0 && !force)
        throw conflict(
          'SB_ERR_GROUP_IN_USE',
          `Group '${name}' still grants access to ${servers} server rule(s); pass force=true to delete it anyway`,
        );
      await groups.delete(name);
      if (doc) await scopes.remove(name);
      request.log.info({ group: name, by: admin.username, force }, 'group deleted');
      return { message: `Group '${name}' deleted`, group_name: name };
    },
  );

  app.get(
    '/api/internal/list-groups',
    {
      schema: {
        tags: ['internal'],
        summary: 'Groups known to the registry: created groups and groups named in scope mappings',
        querystring: Type.Object({
          include_keycloak: Type.Boolean({ default: true }),
          include_scopes: Type.Boolean({ default: true }),
        }),
        response: {
          200: Type.Object({ groups: Type.Array(GroupInfo), total: Type.Integer(), idp_sync: Type.String() }),
          401: ErrorBody,
          403: ErrorBody,
        },
      },
    },
    async (request) => {
      requireBasicAdmin(request);
      const byName = new Map<string, Static<typeof GroupInfo>>();
      const info = (name: string) => {
        const doc = scopes.get(name);
        return {
          name,
          description: doc?.description ?? '',
          system: scopes.isSystemGroup(name),
          has_scope: Boolean(doc),
          mapped_scopes: scopes.scopesForGroups([name]),
          server_count: doc?.server_access.filter((r) => 'server' in r).length ?? 0,
          idp_synced: false,
        };
      };
      for await (const [name, rec] of groups.entries())
        byName.set(name, { ...info(name), description: rec.description, created_at: rec.created_at });
      if (request.query.include_scopes) {
        for (const doc of scopes.list()) for (const g of doc.group_mappings) if (!byName.has(g)) byName.set(g, info(g));
      }
      const list = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
      return {
        groups: list,
        total: list.length,
        idp_sync: 'not implemented: groups are not read from or written to the identity provider',
      };
    },
  );
}
