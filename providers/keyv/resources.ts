import { randomUUID } from 'node:crypto';
import { notFound } from '../../core/errors.ts';
import type {
  CreateResourceRequest,
  CreateStrategyRequest,
  MemoryResource,
  Strategy,
} from '../../core/primitives/memory.ts';
import type { Collection, Store } from '../../core/store.ts';
import { scanAll } from './scan.ts';

/** Memory resources (named memory stores) and their extraction strategies. */
export class Resources {
  private readonly col: Collection<MemoryResource>;

  constructor(store: Store, prefix: string) {
    this.col = store.collection(`${prefix}:resources`);
  }

  async create(req: CreateResourceRequest): Promise<MemoryResource> {
    const r: MemoryResource = {
      memory_id: `mem-${randomUUID()}`,
      name: req.name,
      description: req.description ?? '',
      status: 'ACTIVE',
      strategies: (req.strategies ?? []).map((s) => ({ ...s, strategy_id: `strat-${randomUUID()}` })),
      created_at: new Date().toISOString(),
    };
    await this.col.set(r.memory_id, r);
    return r;
  }

  async list(): Promise<MemoryResource[]> {
    const out: MemoryResource[] = [];
    for (const [, r] of await scanAll(this.col)) out.push(r);
    return out.sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
  }

  get(id: string): Promise<MemoryResource | undefined> {
    return this.col.get(id);
  }

  delete(id: string): Promise<boolean> {
    return this.col.delete(id);
  }

  private async require(id: string): Promise<MemoryResource> {
    const r = await this.col.get(id);
    if (!r) throw notFound('SB_ERR_MEMORY_RESOURCE_NOT_FOUND', `No memory resource ${id}`);
    return r;
  }

  async strategies(id: string): Promise<Strategy[]> {
    return (await this.require(id)).strategies;
  }

  async addStrategy(id: string, req: CreateStrategyRequest): Promise<Strategy> {
    const r = await this.require(id);
    const s: Strategy = { ...req, strategy_id: `strat-${randomUUID()}` };
    await this.col.set(id, { ...r, strategies: [...r.strategies, s] });
    return s;
  }

  async deleteStrategy(id: string, strategyId: string): Promise<boolean> {
    const r = await this.require(id);
    const rest = r.strategies.filter((s) => s.strategy_id !== strategyId);
    if (rest.length === r.strategies.length) return false;
    await this.col.set(id, { ...r, strategies: rest });
    return true;
  }
}
