import type { FastifyBaseLogger } from 'fastify';
import type { Catalog } from '../catalog/context.ts';
import type { Change } from '../catalog/repository.ts';
import type { AgentRecord, ServerRecord, SkillRecord } from '../catalog/records.ts';
import { type DiscoveryConfig, discoveryConfig } from './config.ts';
import { agentDoc, type Doc, gistOf, serverDocs, skillDoc } from './documents.ts';
import { type Embedder, SifEmbedder } from './embedder.ts';
import { DiscoveryEngine, type Hit, type SearchOptions } from './engine.ts';
import { CombinedEmbedder, RemoteEmbeddings } from './remote-embeddings.ts';
import { slicer } from './slices.ts';
import { forgetFieldWords } from './tokens.ts';
import { WORD_RELATIONS_BUILD_COMMAND, wordRelationsInSlices } from './word-relations.ts';
import { WORD_VECTORS_BUILD_COMMAND, wordVectorsInSlices } from './word-vectors.ts';
import { attachWordKnowledge } from './meaning.ts';

/** 'hybrid': lexical + semantic; 'lexical-only': no embeddings configured or the endpoint failed (reported, not hidden). */
export type SearchMode = 'hybrid' | 'lexical-only';

/** Where the index is: not wanted yet (empty registry, no search), being built in slices, or serving. */
export type DiscoveryState = 'idle' | 'building' | 'ready';

/**
 * Keeps the discovery index in step with the catalog: built once at start,
 * then one record at a time from the catalog's change events (register,
 * update, delete, toggle), and rebuilt from the records when a collection is
 * reloaded, which is how a replica on a shared Redis catches up after another
 * replica's write (the catalog compares its generation key on each request).
 *
 * The build and the rebuilds run in slices of ~4 ms that yield to the event
 * loop (slices.ts): at 64,000 docs the build is seconds of CPU, and /healthz,
 * logins and every other route answer meanwhile. A search waits for the work
 * under way, so it never ranks against half an index: a search during the
 * build at start answers when the build is done, with the whole catalog.
 */
export class Discovery {
  private built?: DiscoveryEngine;
  readonly remote?: RemoteEmbeddings;
  private readonly floor?: number;
  /** Docs indexed before their endpoint vector arrived: re-embedded before the next search. */
  private readonly pendingVectors = new Map<string, Doc>();
  /** The build or rebuild under way (each queued behind the one before); undefined when the index is current. */
  private work?: Promise<void>;
  private started = false;
  /** Longest stretch (ms, wall clock and CPU) one slice of the last build held the event loop: the bench reports it. */
  longestSliceMs = 0;
  longestSliceCpuMs = 0;

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
    // Events that land during the build apply at once; the build reads each record when it reaches it, so it
    // never puts back an older text.
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
      if (this.started) this.queue(() => this.rebuild(SERVERS));
    });
    catalog.agents.index.onReload(() => {
      if (this.started) this.queue(() => this.rebuild(AGENTS));
    });
    catalog.skills.index.onReload(() => {
      if (this.started) this.queue(() => this.rebuild(SKILLS));
    });
    if (catalog.servers.index.size + catalog.agents.index.size + catalog.skills.index.size > 0) this.start();
  }

  get state(): DiscoveryState {
    return !this.started ? 'idle' : this.work ? 'building' : 'ready';
  }

  /** Docs in the index so far (during the build, how far it got). */
  get indexed(): number {
    return this.built?.size ?? 0;
  }

  /** Resolves when the index is built and every rebuild queued so far is done. */
  async ready(): Promise<DiscoveryEngine> {
    this.start();
    while (this.work) await this.work;
    return this.built!;
  }

  /** Starts the build (once): word vectors, then every record, in slices. */
  private start(): void {
    if (this.started) return;
    this.started = true;
    this.queue(async () => {
      const { tick, longest, longestCpu } = slicer();
      // A cache file that cannot be read leaves search lexical (and says why) rather than failing every search.
      const orNone = <T>(what: string, load: () => Promise<T | null>) =>
        load().catch((err: unknown) => {
          this.log?.error({ err }, `discovery: the ${what} file could not be read; ranking without it`);
          return null;
        });
      const wv = this.config.semantic ? await orNone('word-vector', wordVectorsInSlices) : null;
      if (this.config.semantic && !wv)
        this.log?.warn(
          `discovery: word-vector file missing or unreadable; semantic ranking is off (lexical only) until it is built: ${WORD_VECTORS_BUILD_COMMAND}`,
        );
      const local = wv ? await SifEmbedder.inSlices(wv, tick) : undefined;
      const embedder: Embedder | undefined = this.remote ? new CombinedEmbedder(local, this.remote) : local;
      const engine = new DiscoveryEngine(embedder);
      if (wv) attachWordKnowledge(engine, wv);
      const relations = this.config.semantic ? await orNone('word-relations', wordRelationsInSlices) : null;
      if (this.config.semantic && !relations)
        this.log?.warn(
          `discovery: word-relations file missing or unreadable; ranking without WordNet relations until it is built: ${WORD_RELATIONS_BUILD_COMMAND}`,
        );
      if (relations) engine.wordRelations = relations;
      this.built = engine;
      for (const kind of [SERVERS, AGENTS, SKILLS]) await this.rebuild(kind, tick);
      this.longestSliceMs = longest();
      this.longestSliceCpuMs = longestCpu();
    });
  }

  /** Runs `task` after the work already queued; a failure is logged and leaves the index as the task left it. */
  private queue(task: () => Promise<void>): void {
    const run = (this.work ?? Promise.resolve()).then(task).catch((err: unknown) => {
      this.log?.error({ err }, 'discovery: index build failed; search ranks what was indexed');
    });
    this.work = run;
    // Registered before anyone awaits `run`, so ready() sees the queue empty as soon as it is.
    void run.finally(() => {
      if (this.work === run) this.work = undefined;
    });
  }

  private put(prefix: string, key: string, docs: Doc[]): void {
    if (!this.built) return;
    this.built.replaceGroup(`${prefix}:${key}`, docs);
    if (this.remote) for (const d of docs) if (!this.remote.vector(gistOf(d))) this.pendingVectors.set(d.id, d);
  }

  /**
   * Puts every record of one kind in place (unchanged text costs a comparison) and drops the groups whose record
   * is gone. Each record is read when the loop reaches it, not from a list taken at the start, so a write that
   * lands between two slices is neither lost nor undone.
   */
  private async rebuild(kind: Kind, tick = slicer().tick): Promise<void> {
    const engine = this.built;
    if (!engine) return;
    const source = kind.source(this.catalog);
    for (const path of source.list().map((r) => r.path)) {
      const r = source.get(path);
      if (r) this.put(kind.prefix, path, kind.docs(r as never));
      await tick();
    }
    for (const g of engine.groupNames())
      if (g.startsWith(`${kind.prefix}:`) && !source.get(g.slice(kind.prefix.length + 1))) engine.replaceGroup(g, []);
    // The memo of field texts served this pass; kept, it would hold a word array per distinct text.
    forgetFieldWords();
  }

  /** Asks the embeddings endpoint (when configured) for the query's vector and any doc vectors still missing. */
  private async prepare(query: string, engine: DiscoveryEngine): Promise<SearchMode> {
    if (!this.remote) return engine.semantic ? 'hybrid' : 'lexical-only';
    const docs = [...this.pendingVectors.values()];
    const outcome = await this.remote.fetch([query, ...docs.map(gistOf)]);
    if (outcome !== 'ok') {
      if (outcome === 'failed')
        this.log?.warn(
          { err: this.remote.lastError },
          'discovery: embeddings endpoint failed; ranking without it for the next 30 s',
        );
      return this.remote.config.mode === 'join' && engine.embedder ? 'hybrid' : 'lexical-only';
    }
    for (const d of docs) {
      engine.reembed(d.id);
      this.pendingVectors.delete(d.id);
    }
    return 'hybrid';
  }

  async search(query: string, opts: Omit<SearchOptions, 'floor'>): Promise<{ hits: Hit[]; mode: SearchMode }> {
    let engine = await this.ready();
    const mode = await this.prepare(query, engine);
    // The endpoint call yields: a reload queued meanwhile is waited for too.
    if (this.work) engine = await this.ready();
    return { hits: engine.search(query, { ...opts, floor: this.floor }), mode };
  }
}

/** One kind of catalog record: where it is kept and the docs it makes. */
interface Kind {
  prefix: string;
  source: (c: Catalog) => { list(): readonly { path: string }[]; get(path: string): unknown };
  docs: (r: never) => Doc[];
}
const SERVERS: Kind = { prefix: 'server', source: (c) => c.servers, docs: serverDocs as (r: never) => Doc[] };
const AGENTS: Kind = {
  prefix: 'agent',
  source: (c) => c.agents.index,
  docs: ((a: AgentRecord) => [agentDoc(a)]) as (r: never) => Doc[],
};
const SKILLS: Kind = {
  prefix: 'skill',
  source: (c) => c.skills.index,
  docs: ((k: SkillRecord) => [skillDoc(k)]) as (r: never) => Doc[],
};

const byCatalog = new WeakMap<Catalog, Discovery>();

/** The discovery index of a catalog, built on first use (the catalog plugin's routes ask for it at registration). */
export function discoveryFor(catalog: Catalog, registryConfig: unknown, log?: FastifyBaseLogger): Discovery {
  let d = byCatalog.get(catalog);
  if (!d) byCatalog.set(catalog, (d = new Discovery(catalog, discoveryConfig(registryConfig), log)));
  return d;
}
