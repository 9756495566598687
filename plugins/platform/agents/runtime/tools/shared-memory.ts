import type { MemoryProvider } from '../../../../../core/primitives/memory.ts';
import { pickTools, type BoundTool, type ToolGroup, type ToolSpec } from '../catalog.ts';
import { recordView, requireSearch } from './memory.ts';
import { assertNamespaceAccess, int, sharedNamespaces, str } from './memory-namespaces.ts';

const ns = { type: 'string', description: 'Shared pool (default: the first of the agent’s shared namespaces)' };
const obj = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties: { ...properties, namespace: ns },
  required,
});

export const SHARED_MEMORY_TOOLS: ToolSpec[] = [
  {
    name: 'share_finding',
    description: 'Write a finding to a shared memory pool other agents read.',
    input_schema: obj({ key: { type: 'string' }, content: { type: 'string' } }, ['key', 'content']),
  },
  {
    name: 'read_shared',
    description: 'Read one finding from a shared memory pool by key.',
    input_schema: obj({ key: { type: 'string' } }, ['key']),
  },
  {
    name: 'search_shared',
    description: 'Search a shared memory pool.',
    input_schema: obj({ query: { type: 'string' }, top_k: { type: 'integer', minimum: 1, maximum: 50, default: 5 } }, [
      'query',
    ]),
  },
  {
    name: 'list_shared',
    description: 'List the findings in a shared memory pool.',
    input_schema: obj({ limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }, []),
  },
];

/** Tools over the pools named by `shared_namespaces`; bound only when the agent has some. */
const sharedMemoryGroup: ToolGroup = {
  key: 'shared_memory',
  primitive: 'memory',
  catalog: async () => SHARED_MEMORY_TOOLS,
  async bind(env) {
    const pools = sharedNamespaces(env.agent);
    if (pools.length === 0) return [];
    const mem = env.resolve<MemoryProvider>('memory');
    const pool = (input: Record<string, unknown>): string => {
      const wanted = str(input, 'namespace', false) ?? pools[0]!;
      if (!pools.includes(wanted))
        throw new Error(`'${wanted}' is not one of this agent's shared namespaces (${pools.join(', ')})`);
      assertNamespaceAccess(wanted, env.principal);
      return wanted;
    };
    const run: Record<string, BoundTool['run']> = {
      share_finding: async (input) => {
        const key = str(input, 'key')!;
        const target = pool(input);
        await mem.store(target, {
          key,
          content: str(input, 'content')!,
          metadata: { source: 'agent', agent: env.agent.name },
        });
        return `Shared '${key}' in '${target}'.`;
      },
      read_shared: async (input) => {
        const key = str(input, 'key')!;
        const r = await mem.retrieve(pool(input), key);
        return r ? JSON.stringify(recordView(env, r)) : `No shared finding under '${key}'.`;
      },
      search_shared: async (input) => {
        requireSearch(mem);
        const hits = await mem.search(pool(input), { query: str(input, 'query')!, top_k: int(input, 'top_k', 5, 50) });
        return JSON.stringify(hits.map((h) => ({ ...recordView(env, h.record), score: h.score })));
      },
      list_shared: async (input) => {
        const page = await mem.list(pool(input), { limit: int(input, 'limit', 20, 100), offset: 0 });
        return JSON.stringify({ total: page.total, records: page.records.map((r) => recordView(env, r)) });
      },
    };
    return pickTools(
      SHARED_MEMORY_TOOLS,
      env.agent.primitives.memory?.tools?.some((t) => t in run) ? env.agent.primitives.memory?.tools : undefined,
    ).map((t) => ({
      ...t,
      primitive: 'memory',
      provider: mem.name,
      run: run[t.name]!,
    }));
  },
};

export default sharedMemoryGroup;
