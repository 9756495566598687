import type { Collection, Store } from '../../../../core/store.ts';

/** One conversation of one agent: who it belongs to and when it was last used. */
export interface SessionEntry {
  session_id: string;
  agent_name: string;
  actor_id: string;
  message_count: number;
  last_activity: string;
  /** Where the history lives: memory events of this provider, or the core store. */
  history: { kind: 'memory'; provider: string } | { kind: 'store' };
}

const key = (agent: string, session: string) => `${agent}/${session}`;

/**
 * The per-agent session index in the core store. Memory events are keyed by
 * actor and session only, so this index is what ties a session to an agent.
 */
export class SessionIndex {
  private readonly col: Collection<SessionEntry>;
  private lastStamp = 0;

  constructor(store: Store) {
    this.col = store.collection<SessionEntry>('agent_sessions');
  }

  get(agent: string, session: string): Promise<SessionEntry | undefined> {
    return this.col.get(key(agent, session));
  }

  async touch(
    entry: Omit<SessionEntry, 'last_activity' | 'message_count'>,
    added: number,
    fresh = false,
  ): Promise<SessionEntry> {
    const prev = fresh ? undefined : await this.get(entry.agent_name, entry.session_id);
    const next: SessionEntry = {
      ...entry,
      message_count: (prev?.message_count ?? 0) + added,
      last_activity: this.stamp(),
    };
    await this.col.set(key(entry.agent_name, entry.session_id), next);
    return next;
  }

  /** Strictly increasing within the process, so "most recent" is well defined for cleanup. */
  private stamp(): string {
    this.lastStamp = Math.max(Date.now(), this.lastStamp + 1);
    return new Date(this.lastStamp).toISOString();
  }

  async list(agent: string): Promise<SessionEntry[]> {
    const out: SessionEntry[] = [];
    for await (const [k, v] of this.col.entries()) if (k.startsWith(`${agent}/`) && v.agent_name === agent) out.push(v);
    return out.sort((a, b) => b.last_activity.localeCompare(a.last_activity));
  }

  delete(agent: string, session: string): Promise<boolean> {
    return this.col.delete(key(agent, session));
  }
}
