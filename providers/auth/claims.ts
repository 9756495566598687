import type { JWTPayload } from 'jose';
import type { Principal } from '../../core/primitives/auth.ts';
import type { JwtOptions } from './options.ts';

/** A claim by name; a dotted name walks into objects (Keycloak's `realm_access.roles`). */
function claim(payload: JWTPayload, name: string): unknown {
  if (name in payload) return payload[name];
  let v: unknown = payload;
  for (const part of name.split('.')) {
    if (!v || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** Array claims as they are; string claims split on spaces or commas (`scope` is space-joined). */
function list(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string') return v.split(/[\s,]+/).filter(Boolean);
  return [];
}

/** The principal a verified token stands for, or undefined when it names nobody. */
export function principalFromClaims(payload: JWTPayload, opts: JwtOptions): Principal | undefined {
  const clientId =
    typeof payload.client_id === 'string'
      ? payload.client_id
      : typeof payload.azp === 'string'
        ? payload.azp
        : undefined;
  const rawId = claim(payload, opts.principal_claim);
  const id = typeof rawId === 'string' && rawId ? rawId : clientId;
  if (!id) return undefined;
  const groups = list(claim(payload, opts.groups_claim));
  const scopes = list(claim(payload, opts.scopes_claim));
  const is_admin =
    groups.some((g) => opts.admin_groups.includes(g)) || scopes.some((s) => opts.admin_scopes.includes(s));
  // A client-credentials token is the client acting for itself: no user behind it.
  const type = clientId !== undefined && (rawId === undefined || rawId === clientId) ? 'service' : 'user';
  return { id, type, is_admin, groups, scopes };
}
