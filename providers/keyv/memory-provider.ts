import { unavailable } from '../../core/errors.ts';
import type { Health, ProviderContext, ProviderFactory } from '../../core/provider.ts';
import type { LlmProvider } from '../../core/primitives/llm.ts';
import type { MemoryCapabilities, MemoryProvider } from '../../core/primitives/memory.ts';
import { openStore, type Store } from '../../core/store.ts';
import { Conversations } from './conversations.ts';
import { RecordStore } from './records.ts';
import { Resources } from './resources.ts';

interface Options {
  /** An llm instance whose `embed()` gives semantic ranking, fused with the lexical one. */
  embeddings?: string;
}

function parseOptions(options: Record<string, unknown>): Options {
  const e = options.embeddings;
  if (e !== undefined && typeof e !== 'string')
    throw new Error("option 'embeddings' must name an llm provider instance");
  return { embeddings: e };
}

/** One implementation for both factories: only the store differs. */
function memoryOn(
  store: Store,
  name: string,
  type: string,
  durable: boolean,
  opts: Options,
  ctx: ProviderContext,
): MemoryProvider {
  // Instance names keep two memory stores on one core store apart.
  const prefix = `memory:${name}`;
  const embedder = opts.embeddings
    ? () => {
        // Looked up per call: llm instances are built after memory ones, and a named
        // embedder that is missing or cannot embed is an error, never a silent fall-back to lexical.
        const llm = ctx.lookup('llm', opts.embeddings) as LlmProvider | undefined;
        if (!llm?.capabilities.embeddings || typeof llm.embed !== 'function') {
          throw unavailable(
            'SB_ERR_MEMORY_EMBEDDINGS_DOWN',
            `Memory provider '${name}' ranks with embeddings from llm provider '${opts.embeddings}', which ${llm ? 'has no embeddings capability' : 'does not exist'}; fix option 'embeddings' of the memory instance`,
          );
        }
        return llm;
      }
    : undefined;
  const records = new RecordStore(store, prefix, embedder);
  const convo = new Conversations(store, prefix);
  const resources = new Resources(store, prefix);
  const capabilities: MemoryCapabilities = {
    search: opts.embeddings ? 'hybrid' : 'lexical',
    events: true,
    branches: true,
    resources: true,
    durable,
  };
  return {
    name,
    type,
    kind: 'memory',
    capabilities,
    store: (ns, req) => records.put(ns, req),
    retrieve: (ns, key) => records.get(ns, key),
    list: (ns, page) => records.list(ns, page),
    search: (ns, req) => records.search(ns, req),
    delete: (ns, key) => records.delete(ns, key),
    namespaces: () => records.namespaces(),
    createEvent: (a, s, req) => convo.create(a, s, req),
    listEvents: (a, s, o) => convo.list(a, s, o),
    getEvent: (a, s, id) => convo.get(a, s, id),
    deleteEvent: (a, s, id) => convo.delete(a, s, id),
    turns: (a, s, k, o) => convo.turns(a, s, k, o?.branch),
    actors: () => convo.actors(),
    sessions: (a) => convo.sessions(a),
    deleteSession: (a, s) => convo.deleteSession(a, s),
    createBranch: (a, s, req) => convo.createBranch(a, s, req),
    listBranches: (a, s) => convo.listBranches(a, s),
    createResource: (req) => resources.create(req),
    listResources: () => resources.list(),
    getResource: (id) => resources.get(id),
    deleteResource: (id) => resources.delete(id),
    listStrategies: (id) => resources.strategies(id),
    addStrategy: (id, req) => resources.addStrategy(id, req),
    deleteStrategy: (id, sid) => resources.deleteStrategy(id, sid),
    healthcheck: async (): Promise<Health> => store.healthcheck(),
    close: async () => {
      // Pending index snapshots are written first, so the next start loads them instead of rebuilding.
      await records.flush();
      if (!durable) await store.close();
    },
  };
}

/** Memory for the life of the process: the noop-mode default, so store-then-retrieve works with no config. */
export const inMemoryMemory: ProviderFactory<MemoryProvider> = {
  type: 'in_memory',
  kind: 'memory',
  autoInstance: true,
  description: 'In-process memory (lost on restart); lexical search',
  create: async (name, options, ctx) =>
    memoryOn(
      await openStore({ backend: 'memory', memoryValues: 'frozen' }),
      name,
      'in_memory',
      false,
      parseOptions(options),
      ctx,
    ),
};

/** Durable memory on the core store: SQLite under DATA_DIR by default, Redis when REDIS_URL is set. */
export const keyvMemory: ProviderFactory<MemoryProvider> = {
  type: 'keyv',
  kind: 'memory',
  autoInstance: true,
  description: 'Durable memory on the core store (SQLite by default, Redis when configured); lexical or hybrid search',
  create: (name, options, ctx) => memoryOn(ctx.store, name, 'keyv', true, parseOptions(options), ctx),
};
