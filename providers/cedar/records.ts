import type { Collection, Store } from '../../core/store.ts';
import type { Engine, Policy } from '../../core/primitives/policy.ts';
import { timeOrderedId, enc } from '../keyv/ids.ts';

/** A change marker: replicas compare it to the one they compiled from. */
export interface VersionMark {
  version: string;
}

/**
 * Engines and policies on the core store, so they survive restarts and every
 * replica on the same SQLite file or Redis reads the same set. Ids sort by
 * creation time, which makes key order list order.
 */
export class PolicyRecords {
  readonly engines: Collection<Engine>;
  readonly meta: Collection<VersionMark>;
  readonly claims: Collection<{ by: string }>;

  constructor(
    private readonly store: Store,
    private readonly instance: string,
  ) {
    this.engines = store.collection<Engine>(`policy:${enc(instance)}:engines`);
    this.meta = store.collection<VersionMark>(`policy:${enc(instance)}:meta`);
    this.claims = store.collection<{ by: string }>(`policy:${enc(instance)}:claims`);
  }

  policies(engineId: string): Collection<Policy> {
    return this.store.collection<Policy>(`policy:${enc(this.instance)}:policies:${enc(engineId)}`);
  }

  newId(): string {
    return timeOrderedId();
  }

  async all<T>(c: Collection<T>): Promise<T[]> {
    const out: T[] = [];
    for await (const [, v] of c.entries()) out.push(v);
    return out;
  }

  /** Every write ends here: one key that every replica polls. */
  async bump(): Promise<string> {
    const version = timeOrderedId();
    await this.meta.set('version', { version });
    return version;
  }

  async version(): Promise<string> {
    return (await this.meta.get('version'))?.version ?? '';
  }
}
