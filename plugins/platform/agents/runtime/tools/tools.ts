import type { ToolsProvider } from '../../../../../core/primitives/tools.ts';
import { pickTools, type BoundTool, type ToolGroup, type ToolSpec } from '../catalog.ts';
import { int, str } from './memory-namespaces.ts';

export const TOOLS_TOOLS: ToolSpec[] = [
  {
    name: 'search_tools',
    description: 'Search the tool registry for tools that can help; returns names, descriptions and input schemas.',
    input_schema: { type: 'object', properties: { query: { type: 'string' }, max_results: { type: 'integer', minimum: 1, maximum: 100, default: 10 } }, required: ['query'] },
  },
  {
    name: 'invoke_tool',
    description: 'Invoke a registered tool by name with parameters matching its input schema.',
    input_schema: { type: 'object', properties: { name: { type: 'string' }, params: { type: 'object' } }, required: ['name'] },
  },
];

/** The tool registry as agent tools: search needs `search`, invoke needs `invoke`. */
const toolsGroup: ToolGroup = {
  key: 'tools',
  primitive: 'tools',
  catalog: async () => TOOLS_TOOLS,
  async bind(env) {
    if (!env.agent.primitives.tools?.enabled) return [];
    const reg = env.resolve<ToolsProvider>('tools');
    const run: Record<string, BoundTool['run']> = {
      search_tools: async (i) => {
        const matches = await reg.search(str(i, 'query')!, int(i, 'max_results', 10, 100));
        return JSON.stringify(matches.map((m) => ({ name: m.tool.name, description: m.tool.description, input_schema: m.tool.input_schema, score: m.score })));
      },
      invoke_tool: async (i) => {
        const params = i.params && typeof i.params === 'object' ? (i.params as Record<string, unknown>) : {};
        return JSON.stringify(await reg.invoke(str(i, 'name')!, params));
      },
    };
    const has = { search_tools: reg.capabilities.search === true, invoke_tool: reg.capabilities.invoke === true } as Record<string, boolean>;
    return pickTools(TOOLS_TOOLS, env.agent.primitives.tools.tools)
      .filter((t) => has[t.name])
      .map((t) => ({ ...t, primitive: 'tools', provider: reg.name, run: run[t.name]! }));
  },
};

export default toolsGroup;
