import type { MemoryProvider } from '../../../../core/primitives/memory.ts';
import type { Collection, Store } from '../../../../core/store.ts';
import type { SessionEntry } from './sessions.ts';

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * Conversation history. With `auto_memory` it is the memory primitive's events
 * (actor = the caller, session = the session id, one event per turn); without
 * it, a list in the core store, so sessions work either way.
 */
export class History {
  private readonly col: Collection<Turn[]>;

  constructor(store: Store) {
    this.col = store.collection<Turn[]>('agent_history');
  }

  async load(
    entry: Pick<SessionEntry, 'agent_name' | 'session_id' | 'actor_id' | 'history'>,
    memory?: MemoryProvider,
  ): Promise<Turn[]> {
    if (entry.history.kind === 'store' || !memory)
      return (await this.col.get(`${entry.agent_name}/${entry.session_id}`)) ?? [];
    const events = await memory.listEvents(entry.actor_id, entry.session_id);
    const turns: Turn[] = [];
    for (const e of events) {
      if (e.metadata?.agent_name !== undefined && e.metadata.agent_name !== entry.agent_name) continue;
      for (const m of e.messages)
        if (m.role === 'user' || m.role === 'assistant') turns.push({ role: m.role, content: m.text });
    }
    return turns;
  }

  async append(
    entry: Pick<SessionEntry, 'agent_name' | 'session_id' | 'actor_id' | 'history'>,
    messages: Turn[],
    memory?: MemoryProvider,
    fresh = false,
  ): Promise<void> {
    if (messages.length === 0) return;
    if (entry.history.kind === 'store' || !memory) {
      const k = `${entry.agent_name}/${entry.session_id}`;
      await this.col.set(k, [...((fresh ? undefined : await this.col.get(k)) ?? []), ...messages]);
      return;
    }
    await memory.createEvent(entry.actor_id, entry.session_id, {
      messages: messages.map((m) => ({ role: m.role, text: m.content })),
      metadata: { agent_name: entry.agent_name },
    });
  }

  async delete(
    entry: Pick<SessionEntry, 'agent_name' | 'session_id' | 'actor_id' | 'history'>,
    memory?: MemoryProvider,
  ): Promise<void> {
    await this.col.delete(`${entry.agent_name}/${entry.session_id}`);
    if (entry.history.kind !== 'memory' || !memory) return;
    if (memory.deleteSession) {
      await memory.deleteSession(entry.actor_id, entry.session_id);
      return;
    }
    const events = await memory.listEvents(entry.actor_id, entry.session_id);
    await Promise.all(events.map((e) => memory.deleteEvent(entry.actor_id, entry.session_id, e.event_id)));
  }
}
