import type { ScopeStore } from '../auth/scope-store.ts';

/**
 * Groups of a server and the scope documents behind them. A group that has a
 * scope document of its name (scope files, POST /api/internal/create-group)
 * grants its members the server there, so /validate and the gateway let them
 * through, not only the catalog's listings. Groups without one stay a label on
 * the server record (visibility to holders of that group or scope name).
 */

/** The group scopes that now grant the server (all methods and tools, as the reference does). */
export async function grantServerToGroups(scopes: ScopeStore, path: string, groups: string[]): Promise<string[]> {
  const withScope = groups.filter((g) => scopes.has(g));
  if (withScope.length) await scopes.addServerToGroups(path, withScope);
  return withScope;
}

/** The group scopes that no longer grant the server. */
export async function revokeServerFromGroups(scopes: ScopeStore, path: string, groups: string[]): Promise<string[]> {
  const withScope = groups.filter((g) => scopes.has(g));
  if (withScope.length) await scopes.removeServerFromGroups(path, withScope);
  return withScope;
}
