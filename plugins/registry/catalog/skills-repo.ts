import type { Store } from '../../../core/store.ts';
import type { SkillRecord } from './records.ts';
import { IndexedCollection } from './repository.ts';

/** Agent Skills, keyed by path (`/skills/<name>`). */
export class SkillRepository {
  readonly index: IndexedCollection<SkillRecord>;
  constructor(store: Store) {
    this.index = new IndexedCollection<SkillRecord>(store, 'registry_skills', (s) => s.path);
  }
  load = () => this.index.load();
  sync = () => this.index.sync();
}
