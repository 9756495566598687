import type { Collection, Store } from '../../../../core/store.ts';
import type { TeamEvent, TeamLimit, TeamPhase } from './events.ts';

export type TaskStatus = 'pending' | 'in_progress' | 'done' | 'failed';

export interface TaskRecord {
  id: string;
  title: string;
  description: string;
  assigned_to: string | null;
  depends_on: string[];
  status: TaskStatus;
  result: string | null;
  error: string | null;
  /** Claimed attempts so far; attempt N is claimed under `<run>/<task>/<N>`. */
  attempts: number;
}

export type RunStatusValue = 'running' | 'done' | 'failed' | 'cancelled' | 'timed_out';

/** One team run as every replica sees it in the core store. The task board lives in it. */
export interface TeamRunRecord {
  team_run_id: string;
  team_name: string;
  actor_id: string;
  message: string;
  status: RunStatusValue;
  phase: TeamPhase;
  /** The process that runs it; a record left `running` by a process that is gone is stale. */
  boot_id: string;
  heartbeat_at: number;
  started_at: string;
  ended_at: string | null;
  /** Events 0..event_count-1 are stored under `<run_id>/<seq>`. */
  event_count: number;
  tasks: TaskRecord[];
  response: string | null;
  turns_used: number;
  limit: TeamLimit | null;
  replans: number;
}

const runKey = (team: string, runId: string) => `${team}/${runId}`;
const eventKey = (runId: string, seq: number) => `${runId}/${String(seq).padStart(8, '0')}`;

/** Team runs, their events, task claims and cancel requests in the core store (SQLite, Redis or memory). */
export class TeamRunStore {
  private readonly runs: Collection<TeamRunRecord>;
  private readonly events: Collection<TeamEvent>;
  private readonly claims: Collection<{ boot_id: string; at: string }>;
  private readonly cancels: Collection<boolean>;

  constructor(
    store: Store,
    private readonly ttlMs: number,
  ) {
    this.runs = store.collection('team_runs');
    this.events = store.collection('team_run_events');
    this.claims = store.collection('team_task_claims');
    this.cancels = store.collection('team_run_cancels');
  }

  get(team: string, runId: string): Promise<TeamRunRecord | undefined> {
    return this.runs.get(runKey(team, runId));
  }

  put(rec: TeamRunRecord): Promise<void> {
    return this.runs.set(runKey(rec.team_name, rec.team_run_id), rec, this.ttlMs);
  }

  async list(team: string): Promise<TeamRunRecord[]> {
    const out: TeamRunRecord[] = [];
    for await (const [k, rec] of this.runs.entries()) if (k.startsWith(`${team}/`)) out.push(rec);
    return out.sort((a, b) => a.started_at.localeCompare(b.started_at));
  }

  async putEvents(runId: string, events: TeamEvent[]): Promise<void> {
    for (const ev of events) await this.events.set(eventKey(runId, ev.seq), ev, this.ttlMs);
  }

  async readEvents(runId: string, from: number, to: number): Promise<TeamEvent[]> {
    if (to <= from) return [];
    const got = await this.events.getMany(Array.from({ length: to - from }, (_, i) => eventKey(runId, from + i)));
    const out: TeamEvent[] = [];
    for (const e of got) {
      if (!e) break; // not written yet: read it on the next poll
      out.push(e);
    }
    return out;
  }

  /** Atomic in the store: of every process that tries attempt N of a task, one wins. */
  claim(runId: string, taskId: string, attempt: number, bootId: string): Promise<boolean> {
    return this.claims.setIfAbsent(
      `${runId}/${taskId}/${attempt}`,
      { boot_id: bootId, at: new Date().toISOString() },
      this.ttlMs,
    );
  }

  requestCancel(runId: string): Promise<void> {
    return this.cancels.set(runId, true, this.ttlMs);
  }

  async cancelRequested(runId: string): Promise<boolean> {
    return (await this.cancels.get(runId)) === true;
  }

  clearCancel(runId: string): Promise<boolean> {
    return this.cancels.delete(runId);
  }

  /** The run's record, events and claims. */
  async delete(rec: TeamRunRecord): Promise<void> {
    await Promise.all(
      Array.from({ length: rec.event_count }, (_, i) => this.events.delete(eventKey(rec.team_run_id, i))),
    );
    const claimKeys = rec.tasks.flatMap((t) =>
      Array.from({ length: t.attempts }, (_, i) => `${rec.team_run_id}/${t.id}/${i + 1}`),
    );
    await Promise.all(claimKeys.map((k) => this.claims.delete(k)));
    await this.cancels.delete(rec.team_run_id);
    await this.runs.delete(runKey(rec.team_name, rec.team_run_id));
  }
}
