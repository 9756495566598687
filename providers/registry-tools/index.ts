import { badRequest, conflict, notFound, unavailable } from '../../core/errors.ts';
import type { ProviderContext, ProviderFactory } from '../../core/provider.ts';
import type { RegistryLink } from '../../core/registry-link.ts';
import {
  ToolAccessDenied,
  type McpServer,
  type Tool,
  type ToolCaller,
  type ToolMatch,
  type ToolsCapabilities,
  type ToolsProvider,
} from '../../core/primitives/tools.ts';
import { McpClientPool } from '../mcp/client-pool.ts';
import { lexicalScore } from '../noop/tools.ts';
import { remoteLink, tokenFor, unreachableIn, type PrincipalScopes } from './access.ts';
import { RegistryCatalog, serverName, serverView, type CatalogTool } from './catalog.ts';
import { SEPARATOR } from './names.ts';
import { StandaloneTools } from './standalone.ts';

const CAPABILITIES: ToolsCapabilities = {
  register: true,
  search: true,
  invoke: true,
  servers: true,
  search_mode: 'lexical',
  qualified_names: `{server}${SEPARATOR}{tool}`,
};

interface Options {
  url?: string;
  token?: string;
  timeout_seconds?: number;
  catalog_ttl_seconds?: number;
  principal_scopes?: PrincipalScopes;
}

function readOptions(o: Record<string, unknown>): Options {
  const bad = (key: string, want: string) => new Error(`option '${key}' must be ${want}`);
  if (o.url !== undefined && (typeof o.url !== 'string' || !/^https?:\/\//.test(o.url)))
    throw bad('url', 'an http(s) URL');
  if (o.token !== undefined && typeof o.token !== 'string') throw bad('token', 'a string');
  for (const k of ['timeout_seconds', 'catalog_ttl_seconds'] as const)
    if (o[k] !== undefined && !(typeof o[k] === 'number' && o[k] >= 0)) throw bad(k, 'a number of seconds');
  const map = o.principal_scopes;
  if (
    map !== undefined &&
    (typeof map !== 'object' ||
      map === null ||
      Object.values(map).some((v) => !Array.isArray(v) || v.some((s) => typeof s !== 'string')))
  ) {
    throw bad('principal_scopes', 'an object of principal id (or group:<name>) -> list of scope names');
  }
  return o as Options;
}

/**
 * Tools of the MCP servers in a registry (spec 2.5's registry-style backend).
 * `url` empty: the registry of this process, through the core's registry link;
 * set: a remote Switchboard (or MCP Gateway Registry) over HTTP. Calls go
 * through the registry's MCP gateway with the official SDK client, so the
 * registry's scopes judge the caller and the server's stored credential is
 * added by the gateway, never seen here.
 */
export const registryTools: ProviderFactory<ToolsProvider> = {
  type: 'registry',
  kind: 'tools',
  autoInstance: true,
  description:
    "Tools of the registered, enabled, healthy MCP servers of a registry, called through its MCP gateway under the caller's registry scopes",
  // The in-process registry is there whenever this process serves the registry surface.
  enginePresent: (ctx) => ctx.surfaces?.includes('registry') === true,
  preferred: (options, ctx) => typeof options.url === 'string' || ctx.surfaces?.includes('registry') === true,
  create(name, options, ctx: ProviderContext) {
    const opts = readOptions(options);
    const remote = opts.url ? remoteLink(opts.url, opts.token) : undefined;
    const link = (): RegistryLink => {
      const l = remote ?? ctx.services?.registry;
      if (!l)
        throw unavailable(
          'SB_ERR_TOOLS_REGISTRY_UNAVAILABLE',
          `The tools provider '${name}' needs the registry: this process does not serve the registry surface, so set the provider's 'url' option to a registry's address`,
        );
      return l;
    };
    const map = opts.principal_scopes ?? {};
    const catalog = new RegistryCatalog(link, (opts.catalog_ttl_seconds ?? 2) * 1000);
    const standalone = new StandaloneTools(ctx.store, name);
    const timeoutMs = (opts.timeout_seconds ?? 30) * 1000;
    // The link (and its fetch) is known only once the registry plugin has registered.
    let pool: McpClientPool | undefined;
    const pools = () => (pool ??= new McpClientPool({ timeoutMs, fetch: (u, init) => link().fetch(String(u), init) }));

    const token = (caller?: ToolCaller) => tokenFor(link(), map, caller, remote !== undefined);
    /** The registry's tools this caller may see; none (not an error) for a caller with no registry scopes at all. */
    const visibleTools = async (caller?: ToolCaller) => {
      let bearer: string;
      try {
        bearer = await token(caller);
      } catch (err) {
        if (err instanceof ToolAccessDenied) return [];
        throw err;
      }
      return [...(await catalog.view(bearer)).tools.values()];
    };

    /** The catalog entry `name` denotes; 409 when it reads two ways (server `a__b` + tool `c`, server `a` + tool `b__c`). */
    const find = async (toolName: string, caller?: ToolCaller): Promise<CatalogTool | undefined> => {
      const view = await catalog.view(await token(caller));
      const readings = view.ambiguous.get(toolName);
      if (readings) {
        throw conflict(
          'SB_ERR_TOOLS_AMBIGUOUS',
          `Tool name '${toolName}' is ambiguous: it reads as ${readings.map((r) => `tool '${r.remote}' of server '${r.server}'`).join(' and as ')}; rename one of the servers`,
        );
      }
      return view.tools.get(toolName);
    };

    const provider: ToolsProvider = {
      name,
      type: 'registry',
      kind: 'tools',
      capabilities: CAPABILITIES,

      async register(tool: Tool) {
        if (tool.name.includes(SEPARATOR))
          throw badRequest(
            'SB_ERR_TOOLS_INVALID_NAME',
            `Tool name '${tool.name}' contains '${SEPARATOR}', which separates server and tool in registry tool names; choose a name without it`,
          );
        return standalone.put(tool);
      },
      async list(caller) {
        const own = await standalone.all();
        const reg = (await visibleTools(caller)).map((t) => structuredClone(t.tool));
        return [...own, ...reg].sort((a, b) => a.name.localeCompare(b.name));
      },
      async get(toolName, caller) {
        if (!toolName.includes(SEPARATOR)) return standalone.get(toolName);
        // Deep-frozen in the catalog (catalog.ts), so shared rather than copied on this per-invoke path.
        return (await find(toolName, caller))?.tool;
      },
      async search(query, maxResults, caller): Promise<ToolMatch[]> {
        // Registry tools ranked by the registry's discovery engine; this provider's own catalogue records lexically.
        let ranked: { entry: CatalogTool; score: number }[] | undefined;
        try {
          ranked = await catalog.search(await token(caller), query, maxResults);
        } catch (err) {
          if (!(err instanceof ToolAccessDenied)) throw err;
          ranked = [];
        }
        const own = ranked ? await standalone.all() : await provider.list(caller);
        const matches: ToolMatch[] = (ranked ?? []).map((r) => ({
          tool: structuredClone(r.entry.tool),
          score: r.score,
        }));
        for (const t of own) {
          const score = lexicalScore(t, query);
          if (score > 0) matches.push({ tool: t, score });
        }
        return matches.sort((a, b) => b.score - a.score || a.tool.name.localeCompare(b.tool.name)).slice(0, maxResults);
      },
      async delete(toolName) {
        return standalone.delete(toolName);
      },
      async invoke(toolName, params, caller) {
        if (!toolName.includes(SEPARATOR)) {
          if (await standalone.get(toolName))
            throw badRequest(
              'SB_ERR_TOOLS_NOT_INVOCABLE',
              `Tool '${toolName}' is a catalogue record with no MCP server behind it; register its server (POST /api/v1/tools/servers) and call it as {server}${SEPARATOR}{tool}`,
            );
          throw notFound('SB_ERR_TOOLS_NOT_FOUND', `Tool '${toolName}' not found`);
        }
        const hit = await find(toolName, caller);
        if (!hit)
          throw notFound(
            'SB_ERR_TOOLS_NOT_FOUND',
            `Tool '${toolName}' not found among the enabled, healthy registry servers this caller can see`,
          );
        const bearer = await token(caller);
        const l = link();
        const endpoint = {
          key: `${bearer}\n${hit.server}`,
          url: `${l.baseUrl}/${hit.server}/mcp`,
          headers: { authorization: `Bearer ${bearer}` },
        };
        let result: Record<string, unknown>;
        try {
          result = await pools().call(endpoint, hit.remote, params);
        } catch (err) {
          const away = unreachableIn(err);
          if (!away) throw err;
          // The session died with the connection: the next call opens a new one.
          await pools().drop(endpoint.key);
          catalog.invalidate();
          throw unavailable('SB_ERR_TOOLS_REGISTRY_UNAVAILABLE', away.message, err);
        }
        return { tool_name: toolName, result, status: 'success' as const };
      },
      async listServers(caller) {
        return (await catalog.view(await token(caller))).servers.map(serverView);
      },
      async getServer(server, caller) {
        const s = (await catalog.view(await token(caller))).servers.find((x) => serverName(x.path) === server);
        return s && serverView(s);
      },
      async registerServer(req, caller): Promise<McpServer> {
        const bearer = await token(caller);
        const l = link();
        const { description, ...rest } = req.config ?? {};
        const res = await l
          .fetch(`${l.baseUrl}/api/servers/register`, {
            method: 'POST',
            headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              ...rest,
              name: req.name,
              path: `/${req.name}`,
              proxy_pass_url: req.url,
              description: typeof description === 'string' && description ? description : `MCP server ${req.name}`,
            }),
          })
          .catch((err: unknown) => {
            const away = unreachableIn(err);
            throw away ? unavailable('SB_ERR_TOOLS_REGISTRY_UNAVAILABLE', away.message, err) : err;
          });
        if (res.status === 401 || res.status === 403)
          throw new ToolAccessDenied(`The registry refused the registration: ${await res.text()}`);
        if (res.status === 409)
          throw conflict('SB_ERR_TOOLS_SERVER_EXISTS', `MCP server '${req.name}' is already registered`);
        if (res.status >= 400 && res.status < 500) {
          const body = (await res.json().catch(() => ({}))) as { detail?: unknown };
          throw badRequest(
            'SB_ERR_TOOLS_SERVER_INVALID',
            `The registry refused the server: ${typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail)}`,
          );
        }
        if (!res.ok)
          throw unavailable(
            'SB_ERR_TOOLS_REGISTRY_UNAVAILABLE',
            `The registry answered ${res.status} to the registration`,
          );
        catalog.invalidate();
        const shown = await provider.getServer(req.name, caller);
        // What the caller sent, minus anything secret (a credential goes to the registry, encrypted, and stays there).
        const config = Object.fromEntries(
          Object.entries(req.config ?? {}).filter(([k]) => !/credential|secret|token|password|api_?key/i.test(k)),
        );
        return { name: req.name, url: req.url, config, health: shown?.health ?? 'unknown' };
      },
      async healthcheck() {
        const l = remote ?? ctx.services?.registry;
        if (!l) return 'down';
        if (!remote) return 'ok';
        try {
          const res = await l.fetch(`${l.baseUrl}/health`, {});
          return res.ok ? 'ok' : 'reachable';
        } catch {
          return 'down';
        }
      },
      async close() {
        await pool?.close();
        catalog.close();
      },
    };
    return provider;
  },
};

export const providers = [registryTools as ProviderFactory];
