import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { accessibleServers, hasPermission, requireUser } from '../access.ts';
import type { UserContext } from '../context.ts';
import { ScopeDocument } from '../scope-store.ts';

const ErrorBody = Type.Object({ detail: Type.Unknown(), code: Type.String() });
const StringLists = Type.Record(Type.String(), Type.Array(Type.String()));
const Resource = Type.Object({ type: Type.String(), id: Type.String() });

const Me = Type.Object({
  username: Type.String(),
  auth_method: Type.String(),
  provider: Type.String(),
  scopes: Type.Array(Type.String()),
  groups: Type.Array(Type.String()),
  can_modify_servers: Type.Boolean(),
  is_admin: Type.Boolean(),
  ui_permissions: StringLists,
  accessible_servers: Type.Array(Type.String()),
  accessible_services: Type.Array(Type.String()),
  accessible_agents: Type.Array(Type.String()),
  token_kind: Type.Optional(Type.String()),
  resource: Type.Optional(Resource),
});

const UserContextSchema = Type.Object({
  username: Type.String(),
  client_id: Type.Optional(Type.String()),
  groups: Type.Array(Type.String()),
  scopes: Type.Array(Type.String()),
  auth_method: Type.String(),
  provider: Type.String(),
  is_admin: Type.Boolean(),
  ui_permissions: StringLists,
  server_access: Type.Array(
    Type.Object({
      server: Type.String(),
      methods: Type.Array(Type.String()),
      tools: Type.Optional(Type.Array(Type.String())),
    }),
  ),
  agent_actions: StringLists,
  token_kind: Type.Optional(Type.String()),
  resource: Type.Optional(Resource),
});

function bound(user: UserContext, list: string[]): string[] {
  if (!user.resource) return list;
  const id = user.resource.id;
  return list.includes('all') ? [`/${id}`] : list.filter((p) => p.replace(/^\/+|\/+$/g, '') === id);
}

/** The answer of /api/auth/me: who the caller is and what the UI should offer them. */
export function describeUser(user: UserContext) {
  const perms = user.ui_permissions;
  const agents = [
    ...new Set([
      ...(perms.list_agents ?? []),
      ...(perms.get_agent ?? []),
      ...(user.agent_actions.list_agents ?? []),
      ...(user.agent_actions.get_agent ?? []),
    ]),
  ];
  return {
    username: user.username,
    auth_method: user.auth_method,
    provider: user.provider,
    scopes: user.scopes,
    groups: user.groups,
    can_modify_servers: hasPermission(user, 'modify_service'),
    is_admin: user.is_admin && !user.resource,
    ui_permissions: perms as Record<string, string[]>,
    accessible_servers: accessibleServers(user),
    accessible_services: bound(user, perms.list_service ?? []),
    accessible_agents: bound(user, agents),
    ...(user.token_kind ? { token_kind: user.token_kind } : {}),
    ...(user.resource ? { resource: user.resource } : {}),
  };
}

/** Introspection of the caller and the scope catalogue. */
export default async function scopeRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { scopes } = app.registryAuth;

  app.get(
    '/api/auth/me',
    {
      schema: {
        tags: ['auth'],
        summary: 'Who am I: identity, scopes and what they allow',
        response: { 200: Me, 401: ErrorBody },
      },
    },
    async (request) => describeUser(requireUser(request)),
  );

  app.get(
    '/api/debug/user-context',
    {
      schema: {
        tags: ['auth'],
        summary: "The caller's full user context, as the registry sees it",
        response: { 200: UserContextSchema, 401: ErrorBody },
      },
    },
    async (request) => requireUser(request) as never,
  );

  app.get(
    '/api/scopes',
    {
      schema: {
        tags: ['scopes'],
        summary: 'Scope documents: all of them for admins, the caller’s own otherwise',
        response: { 200: Type.Object({ scopes: Type.Array(ScopeDocument), total: Type.Integer() }), 401: ErrorBody },
      },
    },
    async (request) => {
      const user = requireUser(request);
      const list = user.is_admin ? scopes.list() : scopes.list().filter((s) => user.scopes.includes(s._id));
      return { scopes: list, total: list.length };
    },
  );
}
