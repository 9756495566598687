import { badRequest, conflict, notFound } from '../../core/errors.ts';
import type {
  Branch,
  CreateBranchRequest,
  CreateEventRequest,
  MemoryEvent,
  MemorySession,
} from '../../core/primitives/memory.ts';
import type { Collection, Store } from '../../core/store.ts';
import { enc, timeOrderedId } from './ids.ts';
import { scanAll } from './scan.ts';

const sessionKey = (actor: string, session: string) => `${enc(actor)}/${enc(session)}`;

/**
 * Conversation events per (actor, session), the sessions index, and branches.
 * Event ids sort by time, so a session's events come back in order from any backend.
 */
export class Conversations {
  private readonly sessionsCol: Collection<MemorySession>;
  private readonly branchesCol: Collection<Branch>;

  constructor(
    private readonly store: Store,
    private readonly prefix: string,
  ) {
    this.sessionsCol = store.collection(`${prefix}:sessions`);
    this.branchesCol = store.collection(`${prefix}:branches`);
  }

  private events(actor: string, session: string): Collection<MemoryEvent> {
    return this.store.collection<MemoryEvent>(`${this.prefix}:ev:${sessionKey(actor, session)}`);
  }

  async create(actor: string, session: string, req: CreateEventRequest): Promise<MemoryEvent> {
    if (req.branch !== undefined && !(await this.branchesCol.get(`${sessionKey(actor, session)}/${enc(req.branch)}`))) {
      throw notFound(
        'SB_ERR_MEMORY_BRANCH_NOT_FOUND',
        `No branch '${req.branch}' in session ${session} of actor ${actor}; create it first`,
      );
    }
    const event: MemoryEvent = {
      event_id: timeOrderedId(),
      actor_id: actor,
      session_id: session,
      messages: req.messages,
      timestamp: new Date().toISOString(),
      metadata: req.metadata ?? {},
    };
    if (req.branch !== undefined) event.branch = req.branch;
    await this.events(actor, session).set(event.event_id, event);
    const key = sessionKey(actor, session);
    const prev = await this.sessionsCol.get(key);
    await this.sessionsCol.set(key, {
      session_id: session,
      actor_id: actor,
      message_count: (prev?.message_count ?? 0) + req.messages.length,
      last_activity: event.timestamp,
    });
    return event;
  }

  /** All events of the session in time order (main line only, or main line up to the fork plus the branch). */
  async list(actor: string, session: string, opts: { branch?: string; limit?: number } = {}): Promise<MemoryEvent[]> {
    const all: MemoryEvent[] = [];
    for (const [, e] of await scanAll(this.events(actor, session))) all.push(e);
    all.sort((a, b) => (a.event_id < b.event_id ? -1 : 1));
    let view: MemoryEvent[];
    if (opts.branch === undefined) {
      view = all.filter((e) => e.branch === undefined);
    } else {
      const b = await this.branchesCol.get(`${sessionKey(actor, session)}/${enc(opts.branch)}`);
      if (!b) throw notFound('SB_ERR_MEMORY_BRANCH_NOT_FOUND', `No branch '${opts.branch}' in session ${session}`);
      // A branch sees the main line up to and including its root, then its own events.
      view = all.filter((e) => (e.branch === undefined && e.event_id <= b.root_event_id) || e.branch === opts.branch);
    }
    return opts.limit !== undefined ? view.slice(-opts.limit) : view;
  }

  get(actor: string, session: string, id: string): Promise<MemoryEvent | undefined> {
    return this.events(actor, session).get(id);
  }

  async delete(actor: string, session: string, id: string): Promise<boolean> {
    const col = this.events(actor, session);
    const e = await col.get(id);
    if (!e) return false;
    await col.delete(id);
    const key = sessionKey(actor, session);
    const s = await this.sessionsCol.get(key);
    if (s) await this.sessionsCol.set(key, { ...s, message_count: Math.max(0, s.message_count - e.messages.length) });
    return true;
  }

  async turns(
    actor: string,
    session: string,
    k: number,
    branch?: string,
  ): Promise<Array<{ messages: Array<{ text: string; role: string }> }>> {
    const events = await this.list(actor, session, { branch, limit: k });
    return events.map((e) => ({ messages: e.messages }));
  }

  async actors(): Promise<string[]> {
    const set = new Set<string>();
    for (const [, s] of await scanAll(this.sessionsCol)) set.add(s.actor_id);
    return [...set].sort();
  }

  async sessions(actor: string): Promise<MemorySession[]> {
    const out: MemorySession[] = [];
    for (const [, s] of await scanAll(this.sessionsCol)) if (s.actor_id === actor) out.push(s);
    return out.sort((a, b) => (a.last_activity < b.last_activity ? 1 : -1));
  }

  async deleteSession(actor: string, session: string): Promise<boolean> {
    const key = sessionKey(actor, session);
    const had = await this.sessionsCol.get(key);
    await this.events(actor, session).clear();
    for (const [k, b] of await scanAll(this.branchesCol))
      if (b.actor_id === actor && b.session_id === session) await this.branchesCol.delete(k);
    await this.sessionsCol.delete(key);
    return had !== undefined;
  }

  async createBranch(actor: string, session: string, req: CreateBranchRequest): Promise<Branch> {
    const root = await this.get(actor, session, req.root_event_id);
    if (!root)
      throw notFound(
        'SB_ERR_MEMORY_EVENT_NOT_FOUND',
        `No event ${req.root_event_id} in session ${session} of actor ${actor} to fork from`,
      );
    if (root.branch !== undefined)
      throw badRequest('SB_ERR_MEMORY_BRANCH_ROOT', 'Fork from an event of the main line, not of another branch');
    const key = `${sessionKey(actor, session)}/${enc(req.name)}`;
    if (await this.branchesCol.get(key))
      throw conflict('SB_ERR_MEMORY_BRANCH_EXISTS', `Branch '${req.name}' already exists in this session`);
    const branch: Branch = {
      name: req.name,
      root_event_id: req.root_event_id,
      actor_id: actor,
      session_id: session,
      created_at: new Date().toISOString(),
    };
    await this.branchesCol.set(key, branch);
    if (req.messages && req.messages.length > 0)
      await this.create(actor, session, { messages: req.messages, branch: req.name });
    return branch;
  }

  async listBranches(actor: string, session: string): Promise<Branch[]> {
    const out: Branch[] = [];
    for (const [, b] of await scanAll(this.branchesCol))
      if (b.actor_id === actor && b.session_id === session) out.push(b);
    return out.sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
  }
}
