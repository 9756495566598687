import type { Tool, ToolCaller, ToolsProvider } from '../../../../../core/primitives/tools.ts';
import { pickTools, type BoundTool, type ToolGroup, type ToolSpec } from '../catalog.ts';
import { int, str } from './memory-namespaces.ts';

export const TOOLS_TOOLS: ToolSpec[] = [
  {
    name: 'search_tools',
    description: 'Search the tool registry for tools that can help; returns names, descriptions and input schemas.',
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        max_results: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
      },
      required: ['query'],
    },
  },
  {
    name: 'invoke_tool',
    description: 'Invoke a registered tool by name with parameters matching its input schema.',
    input_schema: {
      type: 'object',
      properties: { name: { type: 'string' }, params: { type: 'object' } },
      required: ['name'],
    },
  },
];

/** Registry and mcp providers name MCP tools `{server}__{tool}`. */
const SEPARATOR = '__';

/** What the model reads back: the text an MCP tool answered with, else the whole result as JSON. */
function asText(result: unknown): string {
  const content = (result as { content?: unknown })?.content;
  if (Array.isArray(content)) {
    const text = content
      .map((p: { type?: string; text?: string }) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : ''))
      .filter(Boolean);
    if (text.length) return text.join('\n');
  }
  return JSON.stringify(result);
}

/**
 * The MCP tools an agent's `primitives.tools` allows, as model tools with
 * their real input schemas: every tool of the servers in `servers`, and every
 * qualified name (`{server}__{tool}`) in `tools`. They run through the tools
 * provider under the caller's principal, so the registry's scopes (or the
 * admin's principal mapping) apply to agent calls exactly as to direct ones.
 */
async function mcpTools(reg: ToolsProvider, servers: string[], wanted: string[], caller: ToolCaller): Promise<Tool[]> {
  if (servers.length === 0 && wanted.length === 0) return [];
  const all = await reg.list(caller);
  return all.filter((t) => {
    const i = t.name.indexOf(SEPARATOR);
    return i > 0 && (servers.includes(t.name.slice(0, i)) || wanted.includes(t.name));
  });
}

/** The tool registry as agent tools: search needs `search`, invoke needs `invoke`; allowed MCP tools become tools of their own. */
const toolsGroup: ToolGroup = {
  key: 'tools',
  primitive: 'tools',
  catalog: async () => TOOLS_TOOLS,
  async bind(env) {
    const cfg = env.agent.primitives.tools;
    if (!cfg?.enabled) return [];
    const reg = env.resolve<ToolsProvider>('tools');
    // Stored runs keep no credentials, so an agent's calls are judged by its caller's principal.
    const caller: ToolCaller = { principal: env.principal, headers: {} };
    const invoke = async (name: string, params: Record<string, unknown>) => reg.invoke(name, params, caller);
    const run: Record<string, BoundTool['run']> = {
      search_tools: async (i) => {
        const matches = await reg.search(str(i, 'query')!, int(i, 'max_results', 10, 100), caller);
        return JSON.stringify(
          matches.map((m) => ({
            name: m.tool.name,
            description: m.tool.description,
            input_schema: m.tool.input_schema,
            score: m.score,
          })),
        );
      },
      invoke_tool: async (i) => {
        const params = i.params && typeof i.params === 'object' ? (i.params as Record<string, unknown>) : {};
        return JSON.stringify(await invoke(str(i, 'name')!, params));
      },
    };
    const has = {
      search_tools: reg.capabilities.search === true,
      invoke_tool: reg.capabilities.invoke === true,
    } as Record<string, boolean>;
    const generic = pickTools(TOOLS_TOOLS, cfg.tools)
      .filter((t) => has[t.name])
      .map((t) => ({ ...t, primitive: 'tools', provider: reg.name, run: run[t.name]! }));
    const servers = Array.isArray(cfg.servers)
      ? (cfg.servers as unknown[]).filter((s): s is string => typeof s === 'string')
      : [];
    const named = (cfg.tools ?? []).filter((n) => n.includes(SEPARATOR));
    const direct =
      reg.capabilities.invoke === true && reg.capabilities.search === true
        ? await mcpTools(reg, servers, named, caller)
        : [];
    return [
      ...generic,
      ...direct.map((t) => ({
        name: t.name,
        description: t.description,
        input_schema: t.input_schema,
        primitive: 'tools',
        provider: reg.name,
        run: async (input: Record<string, unknown>) => asText((await invoke(t.name, input)).result),
      })),
    ];
  },
};

export default toolsGroup;
