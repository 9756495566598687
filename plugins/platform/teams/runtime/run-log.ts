import type { TeamEvent, TeamEventBody } from './events.ts';
import type { TeamRunRecord, TeamRunStore } from './run-store.ts';

/**
 * The writer side of one run on this process: events get their sequence
 * number, go to live subscribers at once, and are written to the store in
 * batches behind them with the record (task board, event count, heartbeat),
 * so a slow store never delays a token.
 */
export class TeamRunLog {
  private pending: TeamEvent[] = [];
  private chain: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;
  private nextSeq: number;
  readonly subscribers = new Set<(ev: TeamEvent) => void>();

  constructor(
    private readonly store: TeamRunStore,
    readonly record: TeamRunRecord,
    private readonly flushMs: number,
    private readonly onError: (err: unknown) => void,
  ) {
    this.nextSeq = record.event_count;
  }

  emit(body: TeamEventBody): TeamEvent {
    const ev = { ...body, seq: this.nextSeq++ } as TeamEvent;
    this.pending.push(ev);
    // `done` reaches live clients once it and the final board are stored, so a client
    // that reads the run when its stream ends sees the run ended.
    if (ev.type === 'done') void this.flush().then(() => this.deliver(ev));
    else {
      this.deliver(ev);
      this.schedule();
    }
    return ev;
  }

  private deliver(ev: TeamEvent): void {
    for (const s of this.subscribers) {
      try {
        s(ev);
      } catch {
        this.subscribers.delete(s); // a broken client must not stop the run
      }
    }
  }

  /** The record changed (a task moved): write it with the next batch. */
  schedule(): void {
    if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Write what is pending, then the record with its event count and a fresh heartbeat. */
  flush(patch: Partial<TeamRunRecord> = {}): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    Object.assign(this.record, patch);
    this.chain = this.chain.then(async () => {
      try {
        await this.store.putEvents(this.record.team_run_id, batch);
        // Counted only once written, so a reader never asks for an event that is not there yet.
        this.record.event_count = Math.max(this.record.event_count, (batch.at(-1)?.seq ?? -1) + 1);
        this.record.heartbeat_at = Date.now();
        await this.store.put(this.record);
      } catch (err) {
        this.onError(err);
      }
    });
    return this.chain;
  }
}
