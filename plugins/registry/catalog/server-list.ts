import type { UserContext } from '../auth/context.ts';
import { serverVisibility } from './access.ts';
import type { Catalog } from './context.ts';
import type { ServerRecord } from './records.ts';

/** `query` matches case-insensitively against path, name, description and tags. */
export function matchesQuery(s: ServerRecord, q: string): boolean {
  if (!q) return true;
  const needle = q.toLowerCase();
  return (
    s.path.toLowerCase().includes(needle) ||
    s.server_name.toLowerCase().includes(needle) ||
    s.description.toLowerCase().includes(needle) ||
    s.tags.some((t) => t.toLowerCase().includes(needle))
  );
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

/**
 * The GET /api/servers body, cached per (list version, what the caller may
 * see) while no query is given: callers with the same visibility share one
 * Buffer until the next write to the server collection.
 */
export class ServerListCache {
  private version: readonly ServerRecord[] | undefined;
  private readonly bodies = new Map<string, Buffer>();

  constructor(private readonly toJson: (s: ServerRecord) => string) {}

  body(catalog: Catalog, user: UserContext, query = ''): Buffer {
    const q = query.trim();
    const build = () => Buffer.from(`{"servers":[${visibleServers(catalog, user, q).map(this.toJson).join(',')}]}`);
    if (q || user.resource) return build();
    const list = catalog.servers.list();
    if (list !== this.version) {
      this.version = list;
      this.bodies.clear();
    }
    const key = visibilityKey(user);
    let body = this.bodies.get(key);
    if (!body) {
      body = build();
      // Bounded: distinct visibilities are few (one per scope combination), but never unbounded.
      if (this.bodies.size >= 64) this.bodies.delete(this.bodies.keys().next().value!);
      this.bodies.set(key, body);
    }
    return body;
  }
}

function visibilityKey(user: UserContext): string {
  if (user.is_admin || user.server_access.some((r) => r.server === '*' || r.server === 'all')) return '*';
  const names = user.server_access
    .filter((r) => typeof r.server === 'string')
    .map((r) => r.server)
    .sort();
  return JSON.stringify([names, [...user.groups, ...user.scopes].sort()]);
}
