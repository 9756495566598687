import type { UserContext } from '../auth/context.ts';
import { serverVisibility } from './access.ts';
import type { Catalog } from './context.ts';
import type { ServerRecord } from './records.ts';

/** `query` matches case-insensitively against path, name, description and tags. */
export function matchesQuery(s: ServerRecord, q: string): boolean {
  if (!q) return true;
  const needle = q.toLowerCase();
  return s.path.toLowerCase().includes(needle) || s.server_name.toLowerCase().includes(needle) || s.description.toLowerCase().includes(needle) || s.tags.some((t) => t.toLowerCase().includes(needle));
}

// A server no rule names and no group holds: visible only to callers who see everything.
const ALL_PROBE = { path: '/\u0000', groups: [] };

/** The servers a caller may see, in path order (admins skip the per-item check). */
export function visibleServers(catalog: Catalog, user: UserContext, query = ''): ServerRecord[] {
  const all = catalog.servers.list();
  const visible = serverVisibility(user);
  const q = query.trim();
  if (!q && visible(ALL_PROBE) && !user.resource) return all as ServerRecord[];
  return all.filter((s) => visible(s) && matchesQuery(s, q));
}
