import { forbidden } from '../../core/errors.ts';
import type { Principal } from '../../core/primitives/auth.ts';

/**
 * Platform scopes bound what a credential may do, whoever its principal is:
 * `<area>:read` for reads and `<area>:write` for changes, per area of /api/v1.
 * They come from the auth backend (api_key `scopes`, the jwt `scopes_claim`).
 *
 * - A principal carrying no platform scope at all (no scope claim, or only
 *   foreign ones such as `openid` or registry scopes) is not bounded by
 *   scopes: ownership and admin rules alone decide, as before scopes existed.
 *   Most IdP tokens carry `openid profile`, and refusing them all would lock
 *   out every deployment that never heard of platform scopes.
 * - A principal with at least one platform scope may do only what its scopes
 *   name, admins included: a down-scoped token of an admin is still down-scoped.
 *   Ownership still applies on top (a scope never grants another user's record).
 * - `<area>:write` includes `<area>:read`, so a writer can read back what it wrote.
 */
export const SCOPE_AREAS = [
  'agents',
  'teams',
  'memory',
  'llm',
  'browser',
  'tools',
  'policy',
  'evaluations',
  'identity',
  'code_interpreter',
  'observability',
  'credentials',
] as const;
export type ScopeArea = (typeof SCOPE_AREAS)[number];
export type ScopeLevel = 'read' | 'write';

const AREA_BY_SEGMENT = new Map<string, ScopeArea>(SCOPE_AREAS.map((a) => [a.replace('_', '-'), a]));
const PLATFORM_SCOPES = new Set(SCOPE_AREAS.flatMap((a) => [`${a}:read`, `${a}:write`]));
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** POST routes that only read: a read scope is enough for them. */
const READ_ONLY_POSTS = new Set(['/api/v1/memory/:namespace/search']);

/** The scope a route needs, or undefined for routes outside the areas (whoami, provider listings). */
export function requiredScope(method: string, routeUrl: string): string | undefined {
  if (!routeUrl.startsWith('/api/v1/')) return undefined;
  const end = routeUrl.indexOf('/', 8);
  const area = AREA_BY_SEGMENT.get(routeUrl.slice(8, end === -1 ? undefined : end));
  if (!area) return undefined;
  const level: ScopeLevel =
    SAFE_METHODS.has(method) || (method === 'POST' && READ_ONLY_POSTS.has(routeUrl)) ? 'read' : 'write';
  return `${area}:${level}`;
}

/** Whether the principal's scopes bound it at all (see the module comment). */
export function isScopeBounded(who: Pick<Principal, 'scopes'>): boolean {
  return who.scopes.some((s) => PLATFORM_SCOPES.has(s));
}

export function grants(who: Pick<Principal, 'scopes'>, needed: string): boolean {
  if (who.scopes.includes(needed)) return true;
  return needed.endsWith(':read') && who.scopes.includes(`${needed.slice(0, -5)}:write`);
}

/**
 * Refuses (403) a request its credential's scopes do not cover. Runs for every
 * /api/v1 request after authentication; principals without scopes return at the first test.
 */
export function checkScopes(who: Principal, method: string, routeUrl: string | undefined): void {
  if (who.scopes.length === 0 || routeUrl === undefined || !isScopeBounded(who)) return;
  const needed = requiredScope(method, routeUrl);
  if (needed === undefined || grants(who, needed)) return;
  const held = who.scopes.filter((s) => PLATFORM_SCOPES.has(s)).join(' ');
  throw forbidden(
    'SB_ERR_AUTH_SCOPE_MISSING',
    `${method} ${routeUrl} needs scope '${needed}', which this credential was not granted (its platform scopes: ${held}); use a token or key that carries '${needed}'`,
  );
}
