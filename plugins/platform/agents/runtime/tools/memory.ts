import type { MemoryProvider, MemoryRecord } from '../../../../../core/primitives/memory.ts';
import { pickTools, type BindEnv, type BoundTool, type ToolGroup, type ToolSpec } from '../catalog.ts';
import { agentNamespace, assertNamespaceAccess, int, memoryEnabled, str } from './memory-namespaces.ts';

const obj = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required });

export const MEMORY_TOOLS: ToolSpec[] = [
  {
    name: 'remember',
    description: 'Store a fact in long-term memory under a key (overwrites the key).',
    input_schema: obj(
      {
        key: { type: 'string', description: 'Short identifier' },
        content: { type: 'string', description: 'What to remember' },
      },
      ['key', 'content'],
    ),
  },
  {
    name: 'recall',
    description: 'Read the memory stored under a key.',
    input_schema: obj({ key: { type: 'string' } }, ['key']),
  },
  {
    name: 'search_memory',
    description: 'Search long-term memory by meaning or words; returns the best matches.',
    input_schema: obj({ query: { type: 'string' }, top_k: { type: 'integer', minimum: 1, maximum: 50, default: 5 } }, [
      'query',
    ]),
  },
  {
    name: 'forget',
    description: 'Delete the memory stored under a key.',
    input_schema: obj({ key: { type: 'string' } }, ['key']),
  },
  {
    name: 'list_memories',
    description: 'List stored memories, newest first.',
    input_schema: obj({ limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }, []),
  },
];

/** A record as tools return it: the operator's metadata denylist applied. */
export function recordView(env: BindEnv, r: MemoryRecord): Record<string, unknown> {
  return {
    key: r.key,
    content: r.content,
    metadata: env.stripMetadata('memory', r.metadata ?? {}),
    updated_at: r.updated_at,
  };
}

export function requireSearch(mem: MemoryProvider): void {
  if (mem.capabilities.search === 'none') throw new Error(`the memory provider '${mem.name}' does not support search`);
}

const memoryGroup: ToolGroup = {
  key: 'memory',
  primitive: 'memory',
  catalog: async () => MEMORY_TOOLS,
  async bind(env) {
    if (!memoryEnabled(env.agent)) return [];
    const mem = env.resolve<MemoryProvider>('memory');
    const ns = agentNamespace(env.agent, env.principal.id);
    const run: Record<string, BoundTool['run']> = {
      remember: async (input) => {
        const key = str(input, 'key')!;
        await mem.store(ns, {
          key,
          content: str(input, 'content')!,
          metadata: { source: 'agent', agent: env.agent.name },
        });
        return `Remembered '${key}'.`;
      },
      recall: async (input) => {
        const key = str(input, 'key')!;
        const r = await mem.retrieve(ns, key);
        return r ? JSON.stringify(recordView(env, r)) : `No memory stored under '${key}'.`;
      },
      search_memory: async (input) => {
        requireSearch(mem);
        const hits = await mem.search(ns, { query: str(input, 'query')!, top_k: int(input, 'top_k', 5, 50) });
        return JSON.stringify(hits.map((h) => ({ ...recordView(env, h.record), score: h.score })));
      },
      forget: async (input) => {
        const key = str(input, 'key')!;
        return (await mem.delete(ns, key)) ? `Forgot '${key}'.` : `No memory stored under '${key}'.`;
      },
      list_memories: async (input) => {
        const page = await mem.list(ns, { limit: int(input, 'limit', 20, 100), offset: 0 });
        return JSON.stringify({ total: page.total, records: page.records.map((r) => recordView(env, r)) });
      },
    };
    const guarded =
      (fn: BoundTool['run']): BoundTool['run'] =>
      (input, call) => {
        assertNamespaceAccess(ns, env.principal);
        return fn(input, call);
      };
    return pickTools(MEMORY_TOOLS, env.agent.primitives.memory?.tools).map((t) => ({
      ...t,
      primitive: 'memory',
      provider: mem.name,
      run: guarded(run[t.name]!),
    }));
  },
};

export default memoryGroup;
