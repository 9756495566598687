import type { Store } from '../../../core/store.ts';
import type { AgentRecord, TrustLevel } from './records.ts';
import { IndexedCollection } from './repository.ts';

/** Trust weights of the discovery score (ANCHOR-FACTS: unverified 0, community 0.2, verified 0.5, trusted 1.0). */
export const TRUST_WEIGHT: Record<TrustLevel, number> = { unverified: 0, community: 0.2, verified: 0.5, trusted: 1 };

/** `Code Review`, `code_review` and `code-review` name the same skill. */
export function skillKey(s: string): string {
  return s
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '-');
}

interface Prepared {
  /** normalised skill key -> the agent's own spelling of the skill name */
  skills: Map<string, string>;
  tags: Set<string>;
}

export interface DiscoveryHit {
  agent: AgentRecord;
  relevance_score: number;
  matching_skills: string[];
}

/**
 * A2A agent cards. Skill discovery keeps per-agent skill/tag sets, rebuilt
 * lazily after a change, so a discovery over 10,000 agents is a set lookup per
 * agent rather than string work. Ranking by meaning is the discovery engine's
 * (plugins/registry/discovery), not this repository's.
 */
export class AgentRepository {
  readonly index: IndexedCollection<AgentRecord>;
  private prepared?: Map<string, Prepared>;

  constructor(store: Store) {
    this.index = new IndexedCollection<AgentRecord>(store, 'registry_agents', (a) => a.path);
    this.index.onChange(() => {
      this.prepared = undefined;
    });
  }

  load = async () => {
    await this.index.load();
    this.prepared = undefined;
  };
  sync = async () => {
    const before = this.index.list();
    await this.index.sync();
    if (this.index.list() !== before) this.prepared = undefined;
  };

  private prep(): Map<string, Prepared> {
    if (!this.prepared) {
      const m = new Map<string, Prepared>();
      for (const a of this.index.list()) {
        const skills = new Map<string, string>();
        const tags = new Set(a.tags.map((t) => t.toLowerCase()));
        for (const s of a.skills) {
          skills.set(skillKey(s.name), s.name);
          if (s.id) skills.set(skillKey(s.id), s.name);
          for (const t of s.tags ?? []) tags.add(t.toLowerCase());
        }
        m.set(a.path, { skills, tags });
      }
      this.prepared = m;
    }
    return this.prepared;
  }

  /** Score = 0.6 x matched-skill fraction + 0.2 x matched-tag fraction + 0.2 x trust; agents matching no skill are left out. */
  discover(skills: string[], tags: string[], include: (a: AgentRecord) => boolean, max: number): DiscoveryHit[] {
    const wantSkills = [...new Set(skills.map(skillKey).filter(Boolean))];
    const wantTags = [...new Set(tags.map((t) => t.trim().toLowerCase()).filter(Boolean))];
    const prepared = this.prep();
    // Top-k by insertion: thousands of agents may match, only `max` are returned.
    const top: DiscoveryHit[] = [];
    const before = (x: DiscoveryHit, y: DiscoveryHit) =>
      x.relevance_score > y.relevance_score || (x.relevance_score === y.relevance_score && x.agent.path < y.agent.path);
    for (const a of this.index.list()) {
      const p = prepared.get(a.path)!;
      let matched: string[] | undefined;
      for (const k of wantSkills) {
        const name = p.skills.get(k);
        if (name !== undefined) (matched ??= []).push(name);
      }
      if (!matched) continue;
      const tagHits = wantTags.length ? wantTags.filter((t) => p.tags.has(t)).length / wantTags.length : 0;
      const score =
        Math.round(
          (0.6 * (matched.length / wantSkills.length) + 0.2 * tagHits + 0.2 * TRUST_WEIGHT[a.trust_level]) * 10000,
        ) / 10000;
      if (top.length >= max && score <= top[top.length - 1].relevance_score) continue;
      if (!include(a)) continue;
      const hit = { agent: a, relevance_score: score, matching_skills: [...new Set(matched)] };
      let i = top.length;
      while (i > 0 && before(hit, top[i - 1])) i--;
      top.splice(i, 0, hit);
      if (top.length > max) top.pop();
    }
    return top;
  }
}
