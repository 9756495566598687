import type { FastifyRequest } from 'fastify';
import { badRequest, forbidden } from '../../../core/errors.ts';
import type { Principal } from '../../../core/primitives/auth.ts';

/** Names routed to other memory endpoints; a namespace cannot take them. */
const RESERVED = new Set(['namespaces', 'sessions', 'actors', 'resources']);

/**
 * Namespaces named `user:<principal id>` (or `user:<id>:<anything>`) belong to
 * that principal; `group:<group>` (or `group:<group>:<anything>`) to the
 * members of that group. Only they and admins may read or write them; every
 * other namespace is open to any authenticated caller.
 */
export function canUseNamespace(p: Principal | undefined, ns: string): boolean {
  // Most namespaces are shared ones: skip the regex for them (this runs on every memory request).
  if (!ns.startsWith('user:') && !ns.startsWith('group:')) return true;
  const m = /^(user|group):([^:]+)(?::|$)/.exec(ns);
  if (!m || p?.is_admin) return true;
  return m[1] === 'user' ? p?.id === m[2] : (p?.groups ?? []).includes(m[2]);
}

export function checkNamespace(request: FastifyRequest, ns: string): void {
  if (RESERVED.has(ns))
    throw badRequest('SB_ERR_MEMORY_RESERVED_NAMESPACE', `'${ns}' is a reserved name; choose another namespace`);
  if (canUseNamespace(request.principal, ns)) return;
  const [, kind, owner] = /^(user|group):([^:]+)/.exec(ns)!;
  throw forbidden(
    'SB_ERR_MEMORY_NAMESPACE_FORBIDDEN',
    kind === 'user'
      ? `Namespace '${ns}' belongs to user '${owner}'`
      : `Namespace '${ns}' belongs to members of group '${owner}'`,
  );
}

/**
 * Conversation memory of an actor: the actor's own, or any for an admin. A
 * `service` principal gets no blanket access: every client-credentials token
 * is one, so a robot that must read others' conversations is made an admin
 * (api_key `admin: true`, jwt `admin_groups` / `admin_scopes`).
 */
export function checkActor(request: FastifyRequest, actor: string): void {
  const p = request.principal;
  if (!p || p.is_admin || p.id === actor) return;
  throw forbidden('SB_ERR_MEMORY_ACTOR_FORBIDDEN', `Conversation memory of actor '${actor}' belongs to that user`);
}
