import { notFound, notImplemented } from '../../core/errors.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import type { McpServer, Tool, ToolMatch, ToolsCapabilities, ToolsProvider } from '../../core/primitives/tools.ts';
import { lexicalScore } from '../noop/tools.ts';
import { McpClientPool, type McpEndpoint } from './client-pool.ts';

const CAPABILITIES: ToolsCapabilities = {
  register: false,
  search: true,
  invoke: true,
  servers: true,
  search_mode: 'lexical',
  qualified_names: '{server}__{tool}',
};
const SEP = '__';

interface ServerEntry {
  name: string;
  url: string;
  headers: Record<string, string>;
  config: Record<string, unknown>;
}

function readServers(o: Record<string, unknown>): ServerEntry[] {
  const list = o.servers ?? [];
  if (!Array.isArray(list)) throw new Error("option 'servers' must be a list of {name, url, headers?}");
  return list.map((s: unknown, i) => {
    const e = s as { name?: unknown; url?: unknown; headers?: unknown };
    if (typeof e?.name !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(e.name) || e.name.includes(SEP))
      throw new Error(`servers[${i}].name must be letters, digits, '_', '.', '-' without '${SEP}'`);
    if (typeof e.url !== 'string' || !/^https?:\/\//.test(e.url))
      throw new Error(`servers[${i}].url must be the server's streamable HTTP URL`);
    const headers = (e.headers ?? {}) as Record<string, unknown>;
    if (typeof headers !== 'object' || Object.values(headers).some((v) => typeof v !== 'string'))
      throw new Error(`servers[${i}].headers must map header names to strings`);
    return { name: e.name, url: e.url, headers: headers as Record<string, string>, config: {} };
  });
}

/**
 * Tools of a fixed list of MCP servers (`servers: [{name, url, headers}]`),
 * discovered with the official SDK and called directly: for deployments
 * without the registry surface. Tool names are `{server}__{tool}`. Headers
 * (credentials) stay in the config and are never returned.
 */
export const mcpTools: ProviderFactory<ToolsProvider> = {
  type: 'mcp',
  kind: 'tools',
  description: 'Tools of MCP servers listed in the config, discovered and called with the official MCP SDK',
  preferred: (options) => Array.isArray(options.servers) && options.servers.length > 0,
  create(name, options) {
    const servers = new Map(readServers(options).map((s) => [s.name, s]));
    const timeoutMs = (typeof options.timeout_seconds === 'number' ? options.timeout_seconds : 30) * 1000;
    const pool = new McpClientPool({ timeoutMs });
    const health = new Map<string, McpServer['health']>();
    const endpoint = (s: ServerEntry): McpEndpoint => ({ key: s.name, url: s.url, headers: s.headers });

    /** Every server's tools; a server that cannot be listed is marked unhealthy and contributes none. */
    const catalog = async () => {
      const out = new Map<string, { server: string; remote: string; tool: Tool }>();
      await Promise.all(
        [...servers.values()].map(async (s) => {
          try {
            for (const t of await pool.listTools(endpoint(s))) {
              const qualified = `${s.name}${SEP}${t.name}`;
              out.set(qualified, {
                server: s.name,
                remote: t.name,
                tool: {
                  name: qualified,
                  description: t.description ?? '',
                  input_schema: t.inputSchema ?? { type: 'object' },
                },
              });
            }
            health.set(s.name, 'healthy');
          } catch {
            health.set(s.name, 'unhealthy');
            await pool.drop(s.name);
          }
        }),
      );
      return out;
    };
    const view = (s: ServerEntry): McpServer => ({
      name: s.name,
      url: s.url,
      config: s.config,
      health: health.get(s.name) ?? 'unknown',
    });
    const unsupported = (): never => {
      throw notImplemented(
        'SB_ERR_CAPABILITY_MISSING',
        `The tools provider '${name}' (type mcp) serves the tools of its configured MCP servers; registering or deleting tool records needs the noop or registry provider`,
      );
    };

    const provider: ToolsProvider = {
      name,
      type: 'mcp',
      kind: 'tools',
      capabilities: CAPABILITIES,
      register: async () => unsupported(),
      delete: async () => unsupported(),
      async list() {
        return [...(await catalog()).values()].map((e) => e.tool).sort((a, b) => a.name.localeCompare(b.name));
      },
      async get(toolName) {
        return (await catalog()).get(toolName)?.tool;
      },
      async search(query, maxResults) {
        const matches: ToolMatch[] = [];
        for (const t of await provider.list()) {
          const score = lexicalScore(t, query);
          if (score > 0) matches.push({ tool: t, score });
        }
        return matches.sort((a, b) => b.score - a.score || a.tool.name.localeCompare(b.tool.name)).slice(0, maxResults);
      },
      async invoke(toolName, params) {
        const i = toolName.indexOf(SEP);
        const s = i > 0 ? servers.get(toolName.slice(0, i)) : undefined;
        if (!s)
          throw notFound(
            'SB_ERR_TOOLS_NOT_FOUND',
            `Tool '${toolName}' not found: names are {server}${SEP}{tool} with a configured server`,
          );
        const result = await pool.call(endpoint(s), toolName.slice(i + SEP.length), params);
        return { tool_name: toolName, result, status: 'success' as const };
      },
      async listServers() {
        await catalog();
        return [...servers.values()].map(view);
      },
      async registerServer(req) {
        // Kept for the life of the process; the config is the durable list.
        const entry: ServerEntry = { name: req.name, url: req.url, headers: {}, config: req.config ?? {} };
        servers.set(req.name, entry);
        await catalog();
        return view(entry);
      },
      async getServer(server) {
        const s = servers.get(server);
        return s && view(s);
      },
      async healthcheck() {
        if (servers.size === 0) return 'reachable';
        await catalog();
        return [...health.values()].every((h) => h === 'healthy') ? 'ok' : 'reachable';
      },
      close: () => pool.close(),
    };
    return provider;
  },
};

export const providers = [mcpTools as ProviderFactory];
