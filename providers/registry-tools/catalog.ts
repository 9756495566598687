import { unavailable, unprocessable } from '../../core/errors.ts';
import type { McpServer, Tool } from '../../core/primitives/tools.ts';
import type { RegistryLink } from '../../core/registry-link.ts';
import { ToolAccessDenied } from '../../core/primitives/tools.ts';
import { deepFreeze } from '../../core/deep-frozen.ts';
import { qualify } from './names.ts';
import { RegistryUnreachable } from './access.ts';

/** The fields of the registry's server detail this provider reads. */
interface ServerDetail {
  path: string;
  description: string;
  proxy_pass_url?: string;
  is_enabled: boolean;
  health_status: string;
  tags: string[];
  tools: Array<{ name: string; description?: string; inputSchema?: Record<string, unknown> }>;
}

export interface CatalogTool {
  tool: Tool;
  server: string;
  /** The tool's own name on its server. */
  remote: string;
}

export interface CatalogView {
  servers: ServerDetail[];
  tools: Map<string, CatalogTool>;
  /** Qualified names two (server, tool) pairs produce, with the readings: refused, never guessed. */
  ambiguous: Map<string, CatalogTool[]>;
}

/** The server's name in tool names and gateway URLs: its registry path without the leading slash. */
export const serverName = (path: string) => path.replace(/^\/+/, '');

const health = (s: ServerDetail): McpServer['health'] =>
  s.health_status === 'healthy' ? 'healthy' : s.health_status === 'unknown' ? 'unknown' : 'unhealthy';

export function serverView(s: ServerDetail): McpServer {
  return {
    name: serverName(s.path),
    url: s.proxy_pass_url ?? '',
    config: { description: s.description, enabled: s.is_enabled, tags: s.tags, num_tools: s.tools.length },
    health: health(s),
  };
}

/** Tools come from servers that are enabled, healthy and not held for security review. */
const usable = (s: ServerDetail) =>
  s.is_enabled && s.health_status === 'healthy' && !s.tags.includes('security-pending');

/**
 * What the registry shows one caller (its visibility rules applied by the
 * registry itself), kept per token for a moment: an invoke reads it to find
 * the tool's schema, and a burst of calls should not re-read the catalog each.
 */
export class RegistryCatalog {
  private readonly cache = new Map<string, { at: number; view: Promise<CatalogView> }>();
  private following = false;
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly link: () => RegistryLink,
    private readonly ttlMs: number,
  ) {}

  invalidate(): void {
    this.cache.clear();
  }

  /** Stops following the in-process catalog (provider close). */
  close(): void {
    this.unfollow?.();
    this.unfollow = undefined;
    this.cache.clear();
  }

  /**
   * With the registry in this process, a change to its servers drops the cached views, so a registration or a
   * health result is visible to the next call rather than after the TTL (the TTL still bounds what other
   * replicas' writes take to show). Subscribed on first use: the link exists only once the registry has registered.
   */
  private follow(): void {
    if (this.following) return;
    let l: RegistryLink;
    try {
      l = this.link();
    } catch {
      return; // no registry yet: the read that follows says so
    }
    this.following = true;
    this.unfollow = l.onServersChange?.(() => this.invalidate());
  }

  view(token: string): Promise<CatalogView> {
    this.follow();
    const hit = this.cache.get(token);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.view;
    const view = this.read(token);
    this.cache.set(token, { at: Date.now(), view });
    view.catch(() => this.cache.get(token)?.view === view && this.cache.delete(token));
    if (this.cache.size > 1000) this.cache.delete(this.cache.keys().next().value as string);
    return view;
  }

  /**
   * The registry's own ranking of its tools for `query` (POST /api/search/semantic,
   * the engine the registry's search uses), kept to the tools this caller can
   * invoke (the view's enabled, healthy servers). Undefined when the registry
   * has no such route (an older registry): the caller ranks lexically then.
   */
  async search(
    token: string,
    query: string,
    max: number,
  ): Promise<{ entry: CatalogTool; score: number }[] | undefined> {
    const view = await this.view(token);
    const link = this.link();
    let res: Response;
    try {
      res = await link.fetch(`${link.baseUrl}/api/search/semantic`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        // Ask for more than `max`: tools of servers that are down are dropped below.
        body: JSON.stringify({ query, entity_types: ['tool'], max_results: Math.min(100, max * 3) }),
      });
    } catch (err) {
      throw unavailable(
        'SB_ERR_TOOLS_REGISTRY_UNAVAILABLE',
        `The registry at ${link.baseUrl} cannot be reached: ${(err as Error).message}`,
        err,
      );
    }
    if (res.status === 404 || res.status === 405) return undefined;
    if (res.status === 401 || res.status === 403)
      throw new ToolAccessDenied(`The registry refused to search for this caller (${res.status}): ${await res.text()}`);
    // A search the registry refuses as asked (400, 422) is the caller's to fix, not an outage: its detail is passed on.
    if (res.status === 400 || res.status === 422) {
      const refused = (await res.json().catch(() => ({}))) as { detail?: unknown };
      const why = typeof refused.detail === 'string' ? refused.detail : JSON.stringify(refused.detail ?? res.status);
      throw unprocessable('SB_ERR_TOOLS_SEARCH_REFUSED', `The registry refused this search: ${why}`);
    }
    if (!res.ok)
      throw unavailable(
        'SB_ERR_TOOLS_REGISTRY_UNAVAILABLE',
        `The registry at ${link.baseUrl} answered ${res.status} to a search`,
      );
    const body = (await res.json()) as {
      tools?: { server_path: string; tool_name: string; relevance_score: number }[];
    };
    const out: { entry: CatalogTool; score: number }[] = [];
    for (const t of body.tools ?? []) {
      const entry = view.tools.get(qualify(serverName(t.server_path), t.tool_name));
      if (entry && out.length < max) out.push({ entry, score: t.relevance_score });
    }
    return out;
  }

  private async read(token: string): Promise<CatalogView> {
    const link = this.link();
    let res: Response;
    try {
      res = await link.fetch(`${link.baseUrl}/api/server_details/all`, {
        headers: { authorization: `Bearer ${token}` },
      });
    } catch (err) {
      const message =
        err instanceof RegistryUnreachable
          ? err.message
          : `The registry at ${link.baseUrl} cannot be reached: ${(err as Error).message}`;
      throw unavailable('SB_ERR_TOOLS_REGISTRY_UNAVAILABLE', message, err);
    }
    if (res.status === 401 || res.status === 403)
      throw new ToolAccessDenied(
        `The registry refused to list servers for this caller (${res.status}): ${await res.text()}`,
      );
    if (!res.ok)
      throw unavailable(
        'SB_ERR_TOOLS_REGISTRY_UNAVAILABLE',
        `The registry at ${link.baseUrl} answered ${res.status} to the server listing`,
      );
    const servers = Object.values((await res.json()) as Record<string, ServerDetail>).sort((a, b) =>
      a.path.localeCompare(b.path),
    );
    const tools = new Map<string, CatalogTool>();
    const ambiguous = new Map<string, CatalogTool[]>();
    for (const s of servers.filter(usable)) {
      const server = serverName(s.path);
      for (const t of s.tools) {
        const name = qualify(server, t.name);
        const entry: CatalogTool = {
          server,
          remote: t.name,
          // Frozen: the invoke path hands it out without a copy, and its schema's compiled validator is memoised by identity.
          tool: deepFreeze({
            name,
            description: t.description ?? '',
            input_schema: structuredClone(t.inputSchema ?? { type: 'object' }),
          }),
        };
        const taken = tools.get(name);
        if (taken) ambiguous.set(name, [...(ambiguous.get(name) ?? [taken]), entry]);
        else tools.set(name, entry);
      }
    }
    return { servers, tools, ambiguous };
  }
}
