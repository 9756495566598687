import type { Store } from '../../../core/store.ts';
import type { AgentRecord } from './records.ts';
import { IndexedCollection } from './repository.ts';

export class AgentRepository {
  readonly index: IndexedCollection<AgentRecord>;
  constructor(store: Store) {
    this.index = new IndexedCollection<AgentRecord>(store, 'registry_agents', (a) => a.path);
  }
  load = () => this.index.load();
  sync = () => this.index.sync();
}
