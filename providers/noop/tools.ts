import type { Tool, ToolMatch, ToolsCapabilities, ToolsProvider } from '../../core/primitives/tools.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { unsupported } from './unsupported.ts';

const CAPABILITIES: ToolsCapabilities = { register: true, search: true, invoke: false, servers: false };

const words = (s: string) =>
  s
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/**
 * Lexical score in [0, 1]: the share of query words found in the tool, a hit in
 * the name counting double so `weather` ranks `get_weather` above a tool that
 * merely mentions weather.
 */
export function lexicalScore(tool: Tool, query: string): number {
  const q = [...new Set(words(query))];
  if (q.length === 0) return 0;
  const name = words(tool.name);
  const desc = words(tool.description);
  let score = 0;
  for (const w of q) {
    if (name.some((n) => n.includes(w))) score += 2;
    else if (desc.some((d) => d.includes(w))) score += 1;
  }
  return score / (2 * q.length);
}

/** A tool catalogue kept in memory: register, list, search, delete. Nothing can run. */
export const noopTools: ProviderFactory<ToolsProvider> = {
  type: 'noop',
  kind: 'tools',
  autoInstance: true,
  description: 'Keeps a tool catalogue in memory (register, list, search, delete); no invocation, no MCP servers',
  create: (name) => {
    const tools = new Map<string, Tool>();
    const no = (what: string): never => unsupported('tools', name, what);
    return {
      name,
      type: 'noop',
      kind: 'tools',
      capabilities: CAPABILITIES,
      async register(tool) {
        tools.set(tool.name, structuredClone(tool));
        return structuredClone(tool);
      },
      async list() {
        return [...tools.values()].sort((a, b) => a.name.localeCompare(b.name)).map((t) => structuredClone(t));
      },
      async get(toolName) {
        const t = tools.get(toolName);
        return t && structuredClone(t);
      },
      async search(query, maxResults) {
        const matches: ToolMatch[] = [];
        for (const t of tools.values()) {
          const score = lexicalScore(t, query);
          if (score > 0) matches.push({ tool: structuredClone(t), score });
        }
        return matches.sort((a, b) => b.score - a.score || a.tool.name.localeCompare(b.tool.name)).slice(0, maxResults);
      },
      async delete(toolName) {
        return tools.delete(toolName);
      },
      invoke: async () => no('invoking tools'),
      listServers: async () => no('MCP server management'),
      registerServer: async () => no('MCP server management'),
      getServer: async () => no('MCP server management'),
      healthcheck: async () => 'ok',
      close: async () => tools.clear(),
    };
  },
};
