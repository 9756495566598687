import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { StartupError } from '../../../core/errors.ts';
import type { Collection, Store } from '../../../core/store.ts';
import type { ServerAccessRule, UiPermission } from './context.ts';

const ServerRule = Type.Object({
  server: Type.String(),
  methods: Type.Array(Type.String()),
  tools: Type.Optional(Type.Array(Type.String())),
  /** 'api' for rules added at run time (add-to-groups): they survive a restart that reloads the files. */
  source: Type.Optional(Type.String()),
});
const AgentRule = Type.Object({
  agents: Type.Object({
    actions: Type.Array(Type.Object({ action: Type.String(), resources: Type.Array(Type.String()) })),
  }),
});
export const ScopeDocument = Type.Object({
  _id: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  group_mappings: Type.Array(Type.String()),
  server_access: Type.Array(Type.Union([ServerRule, AgentRule])),
  ui_permissions: Type.Record(Type.String(), Type.Array(Type.String())),
  /** Loaded from scopes/*.json: the scope and its groups cannot be deleted through the API. */
  system: Type.Optional(Type.Boolean()),
  /**
   * Servers registered through POST /api/internal/register are added to this
   * scope (all methods and tools), as the reference adds them to its
   * "unrestricted" scope sections; removed again when the server is removed.
   */
  auto_add_registered_servers: Type.Optional(Type.Boolean()),
});
export type ScopeDocument = Static<typeof ScopeDocument>;

/** What one set of scopes grants, merged; cached per scope set. */
export interface Grants {
  server_access: ServerAccessRule[];
  agent_actions: Record<string, string[]>;
  ui_permissions: Partial<Record<UiPermission, string[]>>;
  is_admin: boolean;
}

const ADMIN_PREFIXES = ['register_', 'modify_', 'toggle_', 'delete_', 'publish_'];

/** Read and check every scopes/*.json; a bad file stops startup with its name. */
export function readScopeFiles(dir: string): ScopeDocument[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.map((name) => {
    const file = join(dir, name);
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new StartupError(
        'SB_ERR_SCOPES_INVALID',
        `Scope file ${file} is not valid JSON: ${(err as Error).message}`,
        err,
      );
    }
    const first = Value.Errors(ScopeDocument, doc).First();
    if (first)
      throw new StartupError('SB_ERR_SCOPES_INVALID', `Scope file ${file}: ${first.path || '(root)'} ${first.message}`);
    return { ...(doc as ScopeDocument), system: true };
  });
}

/**
 * Scope documents live in the core store (shared by replicas); this process
 * keeps a copy for the hot path and reloads it when it changes here or when it
 * is older than `maxAgeMs` (changes made by another replica).
 */
export class ScopeStore {
  private readonly col: Collection<ScopeDocument>;
  /** The scope files as read at start: their scopes cannot be deleted through the API, so the store never lacks one legitimately. */
  private files: ScopeDocument[] = [];
  private docs = new Map<string, ScopeDocument>();
  private byGroup = new Map<string, string[]>();
  private grantsCache = new Map<string, Grants>();
  private loadedAt = 0;
  private reloading?: Promise<void>;
  /** Bumped on every reload that changed something, so cached user contexts can tell they are stale. */
  version = 0;
  private signature = '';

  constructor(
    store: Store,
    private readonly maxAgeMs = 10_000,
  ) {
    this.col = store.collection<ScopeDocument>('registry_scopes');
  }

  /**
   * Startup: the files win over what the store holds for the same _id, except
   * server rules added through the API (add-to-groups), which are kept.
   */
  async seed(files: ScopeDocument[]): Promise<void> {
    this.files = files;
    for (const doc of files) {
      const stored = await this.col.get(doc._id);
      const added = (stored?.server_access ?? []).filter(
        (r) =>
          'server' in r && r.source === 'api' && !doc.server_access.some((f) => 'server' in f && f.server === r.server),
      );
      await this.col.set(doc._id, { ...doc, server_access: [...doc.server_access, ...added] });
    }
    await this.reload();
  }

  async reload(): Promise<void> {
    const docs = new Map<string, ScopeDocument>();
    for await (const [id, doc] of this.col.entries()) docs.set(id, doc);
    // A file-defined scope missing from the store was lost with it (a Redis restarted empty), never
    // deleted: the file stands in until the store is seeded again (core/store-seeds.ts), so the admin
    // does not lose its rights in between.
    for (const doc of this.files) if (!docs.has(doc._id)) docs.set(doc._id, doc);
    // The periodic reload mostly finds nothing new: keep the version then, so cached
    // token contexts (and what /validate built from them) stay valid.
    const signature = JSON.stringify([...docs].sort(([a], [b]) => a.localeCompare(b)));
    if (signature === this.signature) {
      this.loadedAt = Date.now();
      return;
    }
    this.signature = signature;
    const byGroup = new Map<string, string[]>();
    for (const doc of docs.values()) {
      for (const g of doc.group_mappings) byGroup.set(g, [...(byGroup.get(g) ?? []), doc._id]);
    }
    this.docs = docs;
    this.byGroup = byGroup;
    this.grantsCache = new Map();
    this.loadedAt = Date.now();
    this.version++;
  }

  /** Non-blocking freshness check for the hot path. */
  refreshIfStale(): void {
    if (this.reloading || Date.now() - this.loadedAt < this.maxAgeMs) return;
    this.reloading = this.reload()
      .catch(() => undefined)
      .finally(() => {
        this.reloading = undefined;
      });
  }

  list(): ScopeDocument[] {
    return [...this.docs.values()].sort((a, b) => a._id.localeCompare(b._id));
  }

  get(id: string): ScopeDocument | undefined {
    return this.docs.get(id);
  }

  has(id: string): boolean {
    return this.docs.has(id);
  }

  async put(doc: ScopeDocument): Promise<void> {
    await this.col.set(doc._id, doc);
    await this.reload();
  }

  async remove(id: string): Promise<boolean> {
    const ok = await this.col.delete(id);
    await this.reload();
    return ok;
  }

  /**
   * add-to-groups: give the scope named after each group access to a server
   * (all methods and tools, as the reference does). Unknown groups -> their names.
   */
  async addServerToGroups(server: string, groups: string[]): Promise<string[]> {
    const missing: string[] = [];
    for (const g of groups) {
      const doc = this.docs.get(g);
      if (!doc) {
        missing.push(g);
        continue;
      }
      const name = server.replace(/^\/+|\/+$/g, '');
      const has = doc.server_access.some((r) => 'server' in r && r.server.replace(/^\/+|\/+$/g, '') === name);
      if (!has)
        await this.col.set(g, {
          ...doc,
          server_access: [...doc.server_access, { server: name, methods: ['all'], tools: ['all'], source: 'api' }],
        });
    }
    await this.reload();
    return missing;
  }

  /** Scopes that receive every server registered through the internal register endpoint. */
  autoAddScopes(): string[] {
    return this.list()
      .filter((d) => d.auto_add_registered_servers)
      .map((d) => d._id);
  }

  /**
   * A server was removed: drop the rules the API added for it everywhere, so a
   * new server registered later at the same path inherits no one's access.
   * Rules written in scope files stay (the operator wrote them by name).
   */
  async removeServerEverywhere(server: string): Promise<string[]> {
    const name = server.replace(/^\/+|\/+$/g, '');
    const changed: string[] = [];
    for (const doc of this.docs.values()) {
      const kept = doc.server_access.filter(
        (r) => !('server' in r) || r.source !== 'api' || r.server.replace(/^\/+|\/+$/g, '') !== name,
      );
      if (kept.length === doc.server_access.length) continue;
      await this.col.set(doc._id, { ...doc, server_access: kept });
      changed.push(doc._id);
    }
    if (changed.length) await this.reload();
    return changed;
  }

  /** remove-from-groups: drop the server's rules from each group's scope. */
  async removeServerFromGroups(server: string, groups: string[]): Promise<string[]> {
    const missing: string[] = [];
    const name = server.replace(/^\/+|\/+$/g, '');
    for (const g of groups) {
      const doc = this.docs.get(g);
      if (!doc) {
        missing.push(g);
        continue;
      }
      await this.col.set(g, {
        ...doc,
        server_access: doc.server_access.filter((r) => !('server' in r) || r.server.replace(/^\/+|\/+$/g, '') !== name),
      });
    }
    await this.reload();
    return missing;
  }

  /** IdP groups (names or GUIDs) -> scope names through group_mappings. */
  scopesForGroups(groups: string[]): string[] {
    const out = new Set<string>();
    for (const g of groups) for (const s of this.byGroup.get(g) ?? []) out.add(s);
    return [...out];
  }

  /** Groups that scope files name: they cannot be deleted. */
  isSystemGroup(group: string): boolean {
    return (
      (this.byGroup.get(group) ?? []).some((s) => this.docs.get(s)?.system) || this.docs.get(group)?.system === true
    );
  }

  grants(scopes: string[]): Grants {
    const key = [...scopes].sort().join(' ');
    let g = this.grantsCache.get(key);
    if (g) return g;
    g = { server_access: [], agent_actions: {}, ui_permissions: {}, is_admin: false };
    for (const name of scopes) {
      const doc = this.docs.get(name);
      if (!doc) continue;
      for (const rule of doc.server_access) {
        if ('agents' in rule) {
          for (const a of rule.agents.actions)
            g.agent_actions[a.action] = union(g.agent_actions[a.action], a.resources);
        } else {
          g.server_access.push(rule);
        }
      }
      for (const [perm, resources] of Object.entries(doc.ui_permissions)) {
        const p = perm as UiPermission;
        g.ui_permissions[p] = union(g.ui_permissions[p], resources);
      }
    }
    g.is_admin = Object.entries(g.ui_permissions).some(
      ([perm, res]) => ADMIN_PREFIXES.some((pre) => perm.startsWith(pre)) && (res ?? []).includes('all'),
    );
    for (const list of Object.values(g.ui_permissions)) Object.freeze(list);
    for (const list of Object.values(g.agent_actions)) Object.freeze(list);
    Object.freeze(g.ui_permissions);
    Object.freeze(g.agent_actions);
    Object.freeze(g.server_access);
    if (this.grantsCache.size > 1000) this.grantsCache.clear();
    this.grantsCache.set(key, g);
    return g;
  }
}

function union(a: string[] | undefined, b: string[]): string[] {
  return [...new Set([...(a ?? []), ...b])];
}
