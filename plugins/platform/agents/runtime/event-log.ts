import type { Collection, Store } from '../../../../core/store.ts';
import type { ChatEvent } from './events.ts';

/** The latest run of a session, as every replica sees it in the core store. */
export interface RunRecord {
  run_id: string;
  agent_name: string;
  session_id: string;
  actor_id: string;
  status: 'running' | 'done' | 'error' | 'cancelled';
  /** The process that runs it; a record left `running` by a process that is gone is stale. */
  boot_id: string;
  heartbeat_at: number;
  started_at: string;
  ended_at?: string;
  /** Events 0..event_count-1 are stored under `<run_id>/<seq>`. */
  event_count: number;
}

export const runKey = (agent: string, session: string) => `${agent}/${session}`;
const eventKey = (runId: string, seq: number) => `${runId}/${String(seq).padStart(8, '0')}`;

/**
 * Run records and their events in the core store (SQLite by default, Redis or
 * memory when configured), so any replica can replay a run and follow it.
 */
export class EventStore {
  readonly runs: Collection<RunRecord>;
  private readonly events: Collection<ChatEvent>;
  private readonly cancels: Collection<boolean>;

  constructor(
    store: Store,
    private readonly ttlMs: number,
  ) {
    this.runs = store.collection<RunRecord>('agent_runs');
    this.events = store.collection<ChatEvent>('agent_run_events');
    this.cancels = store.collection<boolean>('agent_run_cancels');
  }

  getRun(agent: string, session: string): Promise<RunRecord | undefined> {
    return this.runs.get(runKey(agent, session));
  }

  putRun(rec: RunRecord): Promise<void> {
    return this.runs.set(runKey(rec.agent_name, rec.session_id), rec, this.ttlMs);
  }

  /** The run record and its events. */
  async deleteRun(agent: string, session: string): Promise<boolean> {
    const rec = await this.runs.get(runKey(agent, session));
    if (!rec) return false;
    await Promise.all(Array.from({ length: rec.event_count }, (_, i) => this.events.delete(eventKey(rec.run_id, i))));
    return this.runs.delete(runKey(agent, session));
  }

  async putEvents(runId: string, from: number, events: ChatEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i++) await this.events.set(eventKey(runId, from + i), events[i]!, this.ttlMs);
  }

  async readEvents(runId: string, from: number, to: number): Promise<ChatEvent[]> {
    if (to <= from) return [];
    const keys = Array.from({ length: to - from }, (_, i) => eventKey(runId, from + i));
    const got = await this.events.getMany(keys);
    const out: ChatEvent[] = [];
    for (const e of got) {
      if (!e) break; // written out of order by a slow flush: read it on the next poll
      out.push(e);
    }
    return out;
  }

  requestCancel(runId: string): Promise<void> {
    return this.cancels.set(runId, true, this.ttlMs);
  }

  async cancelRequested(runId: string): Promise<boolean> {
    return (await this.cancels.get(runId)) === true;
  }
}

/**
 * The writer side of one run's log: events are kept in order, batched, and
 * written behind the live stream so a slow store never delays a token.
 */
export class RunLog {
  private pending: ChatEvent[] = [];
  private written = 0;
  private chain: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly store: EventStore,
    readonly record: RunRecord,
    private readonly flushMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  append(ev: ChatEvent): void {
    this.pending.push(ev);
    if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Write what is pending, then the record (event count, status, heartbeat). */
  flush(patch: Partial<RunRecord> = {}): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.chain = this.chain.then(async () => {
      try {
        await this.store.putEvents(this.record.run_id, this.written, batch);
        this.written += batch.length;
        Object.assign(this.record, patch, { event_count: this.written, heartbeat_at: Date.now() });
        await this.store.putRun(this.record);
      } catch (err) {
        this.onError(err);
      }
    });
    return this.chain;
  }
}
