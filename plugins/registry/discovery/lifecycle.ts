import type { FastifyBaseLogger } from 'fastify';
import type { Catalog } from '../catalog/context.ts';
import type { Change } from '../catalog/repository.ts';
import type { AgentRecord, ServerRecord, SkillRecord } from '../catalog/records.ts';
import { type DiscoveryConfig, discoveryConfig } from './config.ts';
import { agentDoc, type Doc, gistOf, serverDocs, skillDoc } from './documents.ts';
import { type Embedder, SifEmbedder } from './embedder.ts';
import { DiscoveryEngine, type Hit, type SearchOptions } from './engine.ts';
import { CombinedEmbedder, RemoteEmbeddings } from './remote-embeddings.ts';
import { WORD_VECTORS_BUILD_COMMAND, wordVectors } from './word-vectors.ts';
import { attachWordKnowledge } from './meaning.ts';

/** 'hybrid': lexical + semantic; 'lexical-only': no embeddings configured or the endpoint failed (reported, not hidden). */
export type SearchMode = 'hybrid' | 'lexical-only';

/**
 * Keeps the discovery index in step with the catalog: built once at start,
 * then one record at a time from the catalog's change events (register,
 * update, delete, toggle), and rebuilt from the records when a collection is
 * reloaded, which is how a replica on a shared Redis catches up after another
 * replica's write (the catalog compares its generation key on each request).
 */
export class Discovery {
  private built?: DiscoveryEngine;
  readonly remote?: RemoteEmbeddings;
  private readonly floor?: number;
  /** Docs indexed before their endpoint vector arrived: re-embedded before the next search. */
  private readonly pendingVectors = new Map<string, Doc>();

  constructor(
    private readonly catalog: Catalog,
    private readonly config: DiscoveryConfig,
    private readonly log?: FastifyBaseLogger,
    fetchImpl?: typeof fetch,
  ) {
    if (config.embeddings) this.remote = new RemoteEmbeddings(config.embeddings, fetchImpl);
    this.floor = config.confidence_floor;
    // Until the first search or a catalog holding something at start, there is nothing to keep current:
    // an empty registry (and every test app that never searches) pays nothing for the word vectors.
    catalog.servers.onChange((c: Change<ServerRecord>) =>
      this.put('server', c.key, c.value ? serverDocs(c.value) : []),
    );
    catalog.agents.index.onChange((c: Change<AgentRecord>) =>
      this.put('agent', c.key, c.value ? [agentDoc(c.value)] : []),
    );
    catalog.skills.index.onChange((c: Change<SkillRecord>) =>
      this.put('skill', c.key, c.value ? [skillDoc(c.value)] : []),
    );
    catalog.servers.index.onReload(() => {
      if (this.built) this.rebuildServers();
    });
    catalog.agents.index.onReload(() => {
      if (this.built) this.rebuildAgents();
    });
    catalog.skills.index.onReload(() => {
      if (this.built) this.rebuildSkills();
    });
    if (catalog.servers.index.size + catalog.agents.index.size + catalog.skills.index.size > 0) this.ensure();
  }

  get engine(): DiscoveryEngine {
    return this.ensure();
  }

  /** The index, built from the whole catalog on first use. */
  private ensure(): DiscoveryEngine {
    if (this.built) return this.built;
    const wv = this.config.semantic ? wordVectors() : null;
    if (this.config.semantic && !wv)
      this.log?.warn(
        `discovery: word-vector file missing; semantic ranking is off (lexical only) until it is built: ${WORD_VECTORS_BUILD_COMMAND}`,
      );
    const local = wv ? new SifEmbedder(wv) : undefined;
    const embedder: Embedder | undefined = this.remote ? new CombinedEmbedder(local, this.remote) : local;
    this.built = new DiscoveryEngine(embedder);
    if (wv) attachWordKnowledge(this.built, wv);
    this.rebuildServers();
    this.rebuildAgents();
    this.rebuildSkills();
    return this.built;
  }

  private put(prefix: string, key: string, docs: Doc[]): void {
    if (!this.built) return;
    this.built.replaceGroup(`${prefix}:${key}`, docs);
    if (this.remote) for (const d of docs) if (!this.remote.vector(gistOf(d))) this.pendingVectors.set(d.id, d);
  }

  /** Replaces every group of one prefix with the records now in the collection (unchanged text costs a comparison). */
  private rebuild(prefix: string, records: readonly { path: string }[], docsOf: (r: never) => Doc[]): void {
    const keep = new Set<string>();
    for (const r of records) {
      keep.add(`${prefix}:${r.path}`);
      this.put(prefix, r.path, docsOf(r as never));
    }
    for (const g of this.engine.groupNames())
      if (g.startsWith(`${prefix}:`) && !keep.has(g)) this.engine.replaceGroup(g, []);
  }

  private rebuildServers = () => this.rebuild('server', this.catalog.servers.list(), serverDocs as (r: never) => Doc[]);
  private rebuildAgents = () =>
    this.rebuild('agent', this.catalog.agents.index.list(), ((a: AgentRecord) => [agentDoc(a)]) as (r: never) => Doc[]);
  private rebuildSkills = () =>
    this.rebuild('skill', this.catalog.skills.index.list(), ((k: SkillRecord) => [skillDoc(k)]) as (r: never) => Doc[]);

  /** Asks the embeddings endpoint (when configured) for the query's vector and any doc vectors still missing. */
  private async prepare(query: string): Promise<SearchMode> {
    const engine = this.ensure();
    if (!this.remote) return engine.semantic ? 'hybrid' : 'lexical-only';
    const docs = [...this.pendingVectors.values()];
    const outcome = await this.remote.fetch([query, ...docs.map(gistOf)]);
    if (outcome !== 'ok') {
      if (outcome === 'failed')
        this.log?.warn(
          { err: this.remote.lastError },
          'discovery: embeddings endpoint failed; ranking without it for the next 30 s',
        );
      return this.remote.config.mode === 'join' && this.engine.embedder ? 'hybrid' : 'lexical-only';
    }
    for (const d of docs) {
      this.engine.reembed(d.id);
      this.pendingVectors.delete(d.id);
    }
    return 'hybrid';
  }

  async search(query: string, opts: Omit<SearchOptions, 'floor'>): Promise<{ hits: Hit[]; mode: SearchMode }> {
    const mode = await this.prepare(query);
    return { hits: this.engine.search(query, { ...opts, floor: this.floor }), mode };
  }
}

const byCatalog = new WeakMap<Catalog, Discovery>();

/** The discovery index of a catalog, built on first use (the catalog plugin's routes ask for it at registration). */
export function discoveryFor(catalog: Catalog, registryConfig: unknown, log?: FastifyBaseLogger): Discovery {
  let d = byCatalog.get(catalog);
  if (!d) byCatalog.set(catalog, (d = new Discovery(catalog, discoveryConfig(registryConfig), log)));
  return d;
}
