import type { FastifyRequest } from 'fastify';
import { badRequest, forbidden } from '../../../core/errors.ts';

/** Names routed to other memory endpoints; a namespace cannot take them. */
const RESERVED = new Set(['namespaces', 'sessions', 'actors', 'resources']);

/**
 * Namespaces named `user:<principal id>` (or `user:<id>:<anything>`) belong to
 * that principal: only they and admins may read or write them.
 */
export function checkNamespace(request: FastifyRequest, ns: string): void {
  if (RESERVED.has(ns)) throw badRequest('SB_ERR_MEMORY_RESERVED_NAMESPACE', `'${ns}' is a reserved name; choose another namespace`);
  const m = /^user:([^:]+)(?::|$)/.exec(ns);
  if (!m) return;
  const p = request.principal;
  if (p?.is_admin || p?.id === m[1]) return;
  throw forbidden('SB_ERR_MEMORY_NAMESPACE_FORBIDDEN', `Namespace '${ns}' belongs to user '${m[1]}'`);
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
