import { forbidden } from '../../../core/errors.ts';
import {
  boundTo,
  canAccessServer,
  hasPermission,
  normalizePath,
  requireBasicAdmin,
  requireUser,
} from '../auth/access.ts';
import type { UiPermission, UserContext } from '../auth/context.ts';
import type { AgentRecord, ServerRecord, SkillRecord } from './records.ts';

/**
 * The catalog's questions about a caller, answered with registry auth's checks
 * (plugins/registry/auth/access.ts) so the catalog, /validate and the gateway agree.
 */

export { requireUser };

/** An admin whose token is not bound to one resource. */
export function isAdmin(user: UserContext | undefined): boolean {
  return !!user && user.is_admin && !user.resource;
}

function inGroups(user: UserContext, groups: string[]): boolean {
  if (!groups.length) return false;
  return groups.some((g) => user.groups.includes(g) || user.scopes.includes(g));
}

/**
 * May the caller see this server at all? Admins see everything; others see the
 * servers their scopes' server_access names, and servers added to one of their
 * groups (POST /api/servers/groups/add).
 */
export function serverVisible(user: UserContext, server: Pick<ServerRecord, 'path' | 'groups'>): boolean {
  if (!boundTo(user, server.path)) return false;
  if (user.is_admin) return true;
  return canAccessServer(user, server.path) || inGroups(user, server.groups);
}

/**
 * serverVisible as a closure for list scans over thousands of servers: a
 * wildcard server rule sees everything; otherwise names and groups become sets.
 */
export function serverVisibility(user: UserContext): (s: Pick<ServerRecord, 'path' | 'groups'>) => boolean {
  if (user.resource) return (s) => serverVisible(user, s);
  if (user.is_admin || user.server_access.some((r) => r.server === '*' || r.server === 'all')) return () => true;
  const names = new Set(
    user.server_access.filter((r) => typeof r.server === 'string').map((r) => normalizePath(r.server)),
  );
  const groups = new Set([...user.groups, ...user.scopes]);
  return (s) => names.has(s.path.slice(1)) || s.groups.some((g) => groups.has(g));
}

export function can(user: UserContext, perm: UiPermission, path?: string): boolean {
  if (path !== undefined && !boundTo(user, path)) return false;
  return (user.is_admin && !user.resource) || hasPermission(user, perm, path);
}

export function requireCan(user: UserContext, perm: UiPermission, path?: string): void {
  if (!can(user, perm, path))
    throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `Permission '${perm}' is required${path ? ` on ${path}` : ''}`);
}

/** Credentials may be set only by callers holding register_service or modify_service (spec 5.3 rule 4). */
export function requireCredentialRight(user: UserContext, path: string): void {
  if (!can(user, 'register_service', path) && !can(user, 'modify_service', path)) {
    throw forbidden(
      'SB_ERR_REGISTRY_FORBIDDEN',
      `Setting a backend credential on ${path} needs register_service or modify_service`,
    );
  }
}

/**
 * May the caller read the values of a server's custom headers? They often carry
 * keys (X-API-Key), so they are shown like the credential is: to callers who
 * could set them (register_service or modify_service on the server), masked
 * for everyone else.
 */
export function mayReadHeaders(user: UserContext | undefined, path: string): boolean {
  return !!user && (can(user, 'register_service', path) || can(user, 'modify_service', path));
}

/** /api/internal/* answers only HTTP Basic with the local admin's credentials: one check (and one 401) for the whole family. */
export { requireBasicAdmin };

/**
 * Agents: public and internal cards are visible to callers holding list_agents
 * (or get_agent) on them; private cards only to their owner and admins.
 */
export function agentVisible(
  user: UserContext,
  agent: Pick<AgentRecord, 'path' | 'visibility' | 'registered_by'>,
): boolean {
  if (!boundTo(user, agent.path)) return false;
  if (isAdmin(user) || user.is_admin) return true;
  if (agent.registered_by === user.username) return true;
  if (agent.visibility === 'private') return false;
  return hasPermission(user, 'list_agents', agent.path) || hasPermission(user, 'get_agent', agent.path);
}

/**
 * agentVisible as a closure for list scans: a caller listing every agent
 * ('all' or '*') skips the per-agent permission lookup.
 */
export function agentVisibility(
  user: UserContext,
): (a: Pick<AgentRecord, 'path' | 'visibility' | 'registered_by'>) => boolean {
  if (user.resource) return (a) => agentVisible(user, a);
  if (user.is_admin) return () => true;
  const wild = (list?: string[]) => !!list?.some((r) => r === 'all' || r === '*');
  const everyone =
    wild(user.ui_permissions.list_agents) ||
    wild(user.ui_permissions.get_agent) ||
    wild(user.agent_actions.list_agents) ||
    wild(user.agent_actions.get_agent);
  if (!everyone) return (a) => agentVisible(user, a);
  return (a) => a.visibility !== 'private' || a.registered_by === user.username;
}

export function ownsOrAdmin(user: UserContext, owner: string, path: string): boolean {
  return boundTo(user, path) && (user.is_admin || owner === user.username);
}

/** Skills: public ones to every caller, private ones to owner and admins, group ones to members of the owner's groups. */
export function skillVisible(
  user: UserContext,
  skill: Pick<SkillRecord, 'path' | 'visibility' | 'registered_by'> & { owner_groups?: string[] },
): boolean {
  if (!boundTo(user, skill.path)) return false;
  if (user.is_admin || skill.registered_by === user.username) return true;
  if (skill.visibility === 'public') return true;
  if (skill.visibility === 'group') return inGroups(user, skill.owner_groups ?? []);
  return false;
}

export { normalizePath };
