import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { conflict, notFound } from '../../../../core/errors.ts';
import type { Store } from '../../../../core/store.ts';
import type { AgentRuntime, Caller } from '../../agents/runtime/runtime.ts';
import type { TeamSpec } from '../schemas.ts';
import type { TeamEvent } from './events.ts';
import { TeamRunLog } from './run-log.ts';
import { TeamRunStore, type TaskRecord, type TeamRunRecord } from './run-store.ts';
import { runTeam, type RunMode } from './team-run.ts';

export interface TeamRunSettings {
  heartbeat_ms: number;
  stale_after_ms: number;
  flush_ms: number;
  poll_ms: number;
  resume_wait_ms: number;
  event_ttl_ms: number;
  max_replans: number;
  token_interval_ms: number;
}

interface LocalRun {
  log: TeamRunLog;
  controller: AbortController;
  done: Promise<TeamRunRecord>;
}

const pause = (ms: number, signal?: AbortSignal) => sleep(ms, undefined, { signal }).catch(() => undefined);

export const INTERRUPTED = 'interrupted: the process that ran this task stopped before it finished';

/**
 * Team runs of this process: background tasks that outlive the request that
 * started them, write every event and the task board to the core store,
 * heartbeat while alive, and can be followed, cancelled or retried from any
 * replica that shares the store.
 */
export class TeamRuns {
  readonly bootId = randomUUID();
  readonly store: TeamRunStore;
  private readonly local = new Map<string, LocalRun>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    store: Store,
    private readonly runtime: AgentRuntime,
    private readonly s: TeamRunSettings,
    private readonly log: FastifyBaseLogger,
  ) {
    this.store = new TeamRunStore(store, s.event_ttl_ms);
    this.timer = setInterval(() => void this.beat(), s.heartbeat_ms);
    this.timer.unref();
  }

  /** Running: run by this process, or by another whose heartbeat is fresh. A record a dead process left is not. */
  isActive(rec: TeamRunRecord | undefined): boolean {
    if (rec?.status !== 'running') return false;
    if (this.local.has(rec.team_run_id)) return true;
    return rec.boot_id !== this.bootId && Date.now() - rec.heartbeat_at < this.s.stale_after_ms;
  }

  /**
   * The record as a reader should see it: a run left `running` by a process
   * that is gone reads `interrupted`, its in-progress tasks `failed`.
   */
  view(rec: TeamRunRecord): TeamRunRecord & { display_status: string } {
    if (rec.status !== 'running' || this.isActive(rec)) return { ...rec, display_status: rec.status };
    const tasks = rec.tasks.map(
      (t): TaskRecord => (t.status === 'in_progress' ? { ...t, status: 'failed', error: INTERRUPTED } : t),
    );
    return { ...rec, tasks, display_status: 'interrupted' };
  }

  private launch(
    rec: TeamRunRecord,
    team: TeamSpec,
    caller: Caller,
    mode: RunMode,
    first?: (ev: TeamEvent) => void,
  ): LocalRun {
    const log = new TeamRunLog(this.store, rec, this.s.flush_ms, (err) =>
      this.log.warn({ err, team_run_id: rec.team_run_id }, 'team run log write failed'),
    );
    if (first) log.subscribers.add(first);
    const controller = new AbortController();
    const run: LocalRun = { log, controller, done: Promise.resolve(rec) };
    this.local.set(rec.team_run_id, run);
    run.done = (async () => {
      try {
        await runTeam(
          {
            runtime: this.runtime,
            store: this.store,
            caller,
            team,
            log,
            bootId: this.bootId,
            maxReplans: this.s.max_replans,
            tokenMs: this.s.token_interval_ms,
            signal: controller.signal,
          },
          mode,
        );
      } catch (err) {
        this.log.error({ err, team_run_id: rec.team_run_id }, 'team run failed outside its own handling');
        Object.assign(rec, { phase: 'failed', status: 'failed', ended_at: new Date().toISOString() });
      }
      await log.flush();
      await this.store.clearCancel(rec.team_run_id).catch(() => false);
      this.local.delete(rec.team_run_id);
      log.subscribers.clear();
      return rec;
    })();
    return run;
  }

  /** Start a run; `first` sees every event from `team_start` on. */
  async start(team: TeamSpec, caller: Caller, message: string, first?: (ev: TeamEvent) => void): Promise<LocalRun> {
    const rec: TeamRunRecord = {
      team_run_id: randomUUID(),
      team_name: team.name,
      actor_id: caller.principal.id,
      message,
      status: 'running',
      phase: 'planning',
      boot_id: this.bootId,
      heartbeat_at: Date.now(),
      started_at: new Date().toISOString(),
      ended_at: null,
      event_count: 0,
      tasks: [],
      response: null,
      turns_used: 0,
      limit: null,
      replans: 0,
    };
    await this.store.put(rec);
    return this.launch(rec, team, caller, { kind: 'full' }, first);
  }

  subscribe(runId: string, fn: (ev: TeamEvent) => void): void {
    this.local.get(runId)?.log.subscribers.add(fn);
  }

  unsubscribe(runId: string, fn: (ev: TeamEvent) => void): void {
    this.local.get(runId)?.log.subscribers.delete(fn);
  }

  /**
   * Retry a failed task of a run that is not running: the task is claimed
   * (attempt N+1, atomically, so two replicas cannot both retry it), the
   * partial output of its last attempt is read back from the event log as
   * resume context, then it, its failed dependants and the synthesis run again.
   */
  async retry(
    team: TeamSpec,
    caller: Caller,
    rec: TeamRunRecord,
    taskId: string,
    first: (ev: TeamEvent) => void,
  ): Promise<LocalRun> {
    if (this.isActive(rec))
      throw conflict(
        'SB_ERR_TEAM_RUN_ACTIVE',
        `Run '${rec.team_run_id}' is still running; wait for it or cancel it before retrying a task`,
      );
    const seen = this.view(rec);
    const task = seen.tasks.find((t) => t.id === taskId);
    if (!task) throw notFound('SB_ERR_TEAM_TASK_NOT_FOUND', `Run '${rec.team_run_id}' has no task '${taskId}'`);
    if (task.status !== 'failed')
      throw conflict(
        'SB_ERR_TEAM_TASK_NOT_FAILED',
        `Task '${taskId}' is '${task.status}'; only a failed task can be retried`,
      );
    if (!task.assigned_to || !team.workers.includes(task.assigned_to)) {
      throw conflict(
        'SB_ERR_TEAM_TASK_NOT_RETRYABLE',
        `Task '${taskId}' is assigned to '${task.assigned_to ?? ''}', which is not a worker of team '${team.name}'; it cannot run`,
      );
    }
    // The claim of the next attempt decides who retries; the run record is taken over only by the winner.
    if (!(await this.store.claim(rec.team_run_id, taskId, task.attempts + 1, `retry:${this.bootId}`))) {
      throw conflict(
        'SB_ERR_TEAM_TASK_CLAIMED',
        `Attempt ${task.attempts + 1} of task '${taskId}' is already being run; follow the run's stream instead`,
      );
    }
    const resume = await this.partialOutput(rec, taskId);
    // Attempt N+1 is ours (the scheduler is told so); the run record is taken over for the retry.
    const taken: TeamRunRecord = {
      ...seen,
      status: 'running',
      boot_id: this.bootId,
      heartbeat_at: Date.now(),
      ended_at: null,
    };
    delete (taken as Partial<typeof seen>).display_status;
    await this.store.put(taken);
    return this.launch(taken, team, caller, { kind: 'retry', taskId, resume }, first);
  }

  /** The text the task's last attempt streamed before it stopped. */
  private async partialOutput(rec: TeamRunRecord, taskId: string): Promise<string> {
    const events = await this.store.readEvents(rec.team_run_id, 0, rec.event_count);
    let text = '';
    for (const ev of events) {
      if (ev.type === 'task_claimed' && ev.task_id === taskId) text = '';
      else if (ev.type === 'worker_token' && ev.task_id === taskId) text += ev.content;
    }
    return text;
  }

  /** Cancel an active run, here or on another replica; resolves when it has stopped. 404 when none is active. */
  async cancel(rec: TeamRunRecord | undefined, team: string, runId: string): Promise<void> {
    const mine = this.local.get(runId);
    if (mine) {
      mine.controller.abort();
      await mine.done;
      return;
    }
    if (!rec || !this.isActive(rec))
      throw notFound('SB_ERR_TEAMS_NO_ACTIVE_RUN', `Team '${team}' has no active run '${runId}'`);
    await this.store.requestCancel(runId);
    const deadline = Date.now() + this.s.stale_after_ms + this.s.heartbeat_ms;
    while (Date.now() < deadline) {
      await pause(this.s.poll_ms);
      const now = await this.store.get(team, runId);
      if (now?.status !== 'running') break;
    }
  }

  /**
   * Replay the run's events from the store, then follow it while it is active.
   * A run left running by a process that is gone is waited for (up to
   * resume_wait_ms), in case another replica picks it up.
   */
  async *follow(team: string, runId: string, signal: AbortSignal, from = 0): AsyncGenerator<TeamEvent> {
    let cursor = from;
    let waitingSince: number | undefined;
    while (!signal.aborted) {
      const rec = await this.store.get(team, runId);
      if (!rec) return;
      const evs = await this.store.readEvents(runId, cursor, rec.event_count);
      for (const ev of evs) {
        cursor++;
        yield ev;
      }
      if (cursor < rec.event_count && evs.length > 0) continue;
      if (this.isActive(rec)) {
        waitingSince = undefined;
        await pause(this.s.poll_ms, signal);
        continue;
      }
      if (rec.status !== 'running' && cursor >= rec.event_count) return;
      waitingSince ??= Date.now();
      if (Date.now() - waitingSince >= this.s.resume_wait_ms) return;
      await pause(Math.min(this.s.poll_ms * 5, this.s.resume_wait_ms), signal);
    }
  }

  /** Delete a finished run's record, events and claims (409 while it runs). */
  async remove(rec: TeamRunRecord): Promise<void> {
    if (this.isActive(rec))
      throw conflict('SB_ERR_TEAM_RUN_ACTIVE', `Run '${rec.team_run_id}' is running; cancel it before deleting it`);
    await this.store.delete(rec);
  }

  /** Heartbeat for every local run, and pick up cancellations asked for on other replicas. */
  private async beat(): Promise<void> {
    for (const [id, run] of this.local) {
      try {
        if (await this.store.cancelRequested(id)) run.controller.abort();
        await run.log.flush();
      } catch (err) {
        this.log.warn({ err }, 'team run heartbeat failed');
      }
    }
  }

  /** On shutdown: stop the heartbeat and cancel local runs so their state is written. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const runs = [...this.local.values()];
    for (const r of runs) r.controller.abort();
    const giveUp = new AbortController();
    await Promise.race([Promise.allSettled(runs.map((r) => r.done)), pause(5000, giveUp.signal)]);
    giveUp.abort();
  }
}
