import { SwitchboardError, forbidden } from '../../../core/errors.ts';
import type { FastifyRequest } from 'fastify';
import { checkCsrf, UNSAFE_METHODS } from './csrf.ts';
import type { UiPermission, UserContext } from './context.ts';
import { normalizePath } from './paths.ts';
import { resourceKey } from './resource-binding.ts';

export { normalizePath };

/** The require* helpers take the request (better 401 details) or a UserContext. */
export type Subject = UserContext | FastifyRequest | undefined;

function unpack(subject: Subject): { user?: UserContext; failure?: string } {
  if (subject && 'headers' in subject) return { user: subject.user, failure: subject.authFailure };
  return { user: subject };
}

/**
 * Pure access checks over a UserContext, shared by the catalog, /validate and
 * the MCP gateway so every surface answers the same question the same way.
 */

const WILDCARDS = new Set(['*', 'all']);
const AGENT_PERMS = new Set(['list_agents', 'get_agent', 'publish_agent', 'modify_agent', 'delete_agent']);

/** A resource-bound token may only touch its own resource. */
export function boundTo(user: UserContext, resourcePath: string): boolean {
  if (!user.resource) return true;
  return resourceKey(user.resource.type, user.resource.id) === resourceKey(user.resource.type, resourcePath);
}

function listGrants(list: string[] | undefined, resourcePath?: string): boolean {
  if (!list || list.length === 0) return false;
  if (resourcePath === undefined) return true;
  if (list.some((r) => WILDCARDS.has(r))) return true;
  const want = normalizePath(resourcePath);
  return list.some((r) => normalizePath(r) === want);
}

/**
 * Does the caller hold `perm` (a ui_permissions name or an agent action) on
 * `resourcePath` (any resource when omitted)?
 */
export function hasPermission(
  user: UserContext | undefined,
  perm: UiPermission | string,
  resourcePath?: string,
): boolean {
  if (!user) return false;
  if (resourcePath !== undefined && !boundTo(user, resourcePath)) return false;
  if (listGrants(user.ui_permissions[perm as UiPermission], resourcePath)) return true;
  // Agent permissions may also come from the agents.actions part of server_access.
  if (!AGENT_PERMS.has(perm) && !(perm in user.agent_actions)) return false;
  return listGrants(user.agent_actions[perm], resourcePath);
}

/**
 * May the caller use `method` (and `tool` for tools/call) on the MCP server?
 * Without a method, any rule naming the server grants it. A rule without a
 * `tools` list allows tool calls only when its methods include `all`/`*`.
 */
export function canAccessServer(
  user: UserContext | undefined,
  serverPath: string,
  method?: string,
  tool?: string,
): boolean {
  if (!user) return false;
  const server = normalizePath(serverPath);
  if (user.resource) {
    // A token bound to an agent or skill reaches no MCP server; one bound to a server only that one.
    const serverBound = user.resource.type === 'server' || user.resource.type === 'virtual_server';
    if (!serverBound || !boundTo(user, server)) return false;
  }
  for (const rule of user.server_access) {
    if (!WILDCARDS.has(rule.server) && normalizePath(rule.server) !== server) continue;
    if (method === undefined) return true;
    const allMethods = rule.methods.some((m) => WILDCARDS.has(m));
    if (!allMethods && !rule.methods.includes(method)) continue;
    if (method !== 'tools/call' || tool === undefined) return true;
    const tools = rule.tools ?? (allMethods ? ['*'] : []);
    if (tools.some((t) => WILDCARDS.has(t)) || tools.includes(tool)) return true;
  }
  return false;
}

/** Servers the caller can reach at all: `['all']` when a wildcard rule exists. */
export function accessibleServers(user: UserContext): string[] {
  if (user.server_access.some((r) => WILDCARDS.has(r.server)))
    return user.resource ? [normalizePath(user.resource.id)] : ['all'];
  const names = [...new Set(user.server_access.map((r) => normalizePath(r.server)))];
  return user.resource ? names.filter((n) => boundTo(user, n)) : names;
}

export function requireUser(subject: Subject): UserContext {
  const { user, failure } = unpack(subject);
  if (!user) {
    throw new SwitchboardError(
      401,
      'SB_ERR_AUTH_UNAUTHENTICATED',
      failure ?? 'Missing or invalid credentials: send Authorization: Bearer <token>',
      {
        headers: { 'www-authenticate': 'Bearer' },
      },
    );
  }
  return user;
}

export function requirePermission(user: Subject, perm: UiPermission | string, resourcePath?: string): UserContext {
  const u = requireUser(user);
  if (!hasPermission(u, perm, resourcePath)) {
    throw forbidden(
      'SB_ERR_AUTH_FORBIDDEN',
      `Permission '${perm}' is required${resourcePath ? ` on ${resourcePath}` : ''}`,
    );
  }
  return u;
}

export function requireAdmin(user: Subject): UserContext {
  const u = requireUser(user);
  if (!u.is_admin || u.resource) throw forbidden('SB_ERR_AUTH_ADMIN_REQUIRED', 'Administrator access is required');
  return u;
}

/**
 * /api/internal/*: HTTP Basic with the admin's credentials (scripts), or the
 * console's signed-in admin session (issue 20: the groups page creates and
 * deletes groups). A session that is not an admin gets 403; anything else a
 * 401 with a Basic challenge, so curl -u and browsers prompt. Bearer tokens
 * stay refused here: the spec gives these endpoints to the local admin only.
 */
export function requireBasicAdmin(request: FastifyRequest): UserContext {
  if (request.authSource === 'basic' && request.user?.is_admin) return request.user;
  if (request.authSource === 'cookie' && request.session && request.user) {
    if (!request.user.is_admin || request.user.resource)
      throw forbidden(
        'SB_ERR_AUTH_ADMIN_REQUIRED',
        'The internal admin endpoints need an administrator; this session is not one',
      );
    // The auth plugin's preValidation hook already checked it; again here (idempotent) so no route can skip it.
    if (UNSAFE_METHODS.has(request.method)) checkCsrf(request);
    return request.user;
  }
  const why =
    request.authSource === 'basic'
      ? 'Invalid admin username or password'
      : "HTTP Basic authentication with the admin credentials (or a signed-in admin's session cookie) is required";
  throw new SwitchboardError(401, 'SB_ERR_AUTH_BASIC_REQUIRED', why, {
    headers: { 'www-authenticate': 'Basic realm="mcp-registry", charset="UTF-8"' },
  });
}
