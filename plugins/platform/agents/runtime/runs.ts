import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { conflict, notFound } from '../../../../core/errors.ts';
import type { ChatResponse } from '../schemas.ts';
import { EventStore, RunLog, runKey, type RunRecord } from './event-log.ts';
import { RunCancelled, TERMINAL_EVENTS, type ChatEvent, type Emit } from './events.ts';

export interface RunSettings {
  heartbeat_ms: number;
  stale_after_ms: number;
  flush_ms: number;
  poll_ms: number;
  resume_wait_ms: number;
  event_ttl_ms: number;
}

interface LocalRun {
  log: RunLog;
  controller: AbortController;
  subscribers: Set<Emit>;
  done: Promise<void>;
}

const pause = (ms: number, signal?: AbortSignal) => sleep(ms, undefined, { signal }).catch(() => undefined);

/**
 * Background chat runs: they outlive the request that started them, write every
 * event to the core store, heartbeat while alive, and can be followed or
 * cancelled from any replica that shares the store.
 */
export class RunManager {
  readonly bootId = randomUUID();
  readonly events: EventStore;
  private readonly local = new Map<string, LocalRun>();
  private readonly starting = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    store: ConstructorParameters<typeof EventStore>[0],
    private readonly s: RunSettings,
    private readonly log: FastifyBaseLogger,
  ) {
    this.events = new EventStore(store, s.event_ttl_ms);
    this.timer = setInterval(() => void this.beat(), s.heartbeat_ms);
    this.timer.unref();
  }

  /** Running: run by this process, or by another whose heartbeat is fresh. A record a dead process left is idle. */
  isActive(rec: RunRecord | undefined): boolean {
    if (rec?.status !== 'running') return false;
    const mine = this.local.get(runKey(rec.agent_name, rec.session_id));
    if (mine) return mine.log.record.run_id === rec.run_id;
    return rec.boot_id !== this.bootId && Date.now() - rec.heartbeat_at < this.s.stale_after_ms;
  }

  async status(agent: string, session: string): Promise<{ status: 'running' | 'idle'; run_id?: string }> {
    const rec = await this.events.getRun(agent, session);
    return this.isActive(rec)
      ? { status: 'running', run_id: rec!.run_id }
      : { status: 'idle', ...(rec ? { run_id: rec.run_id } : {}) };
  }

  /**
   * Start a run. `first` is subscribed before the first event so the caller
   * that started the run sees `stream_start`.
   */
  async start(
    ids: { agent: string; session: string; actor: string },
    first: Emit,
    execute: (emit: Emit, signal: AbortSignal) => Promise<ChatResponse>,
  ): Promise<string> {
    const key = runKey(ids.agent, ids.session);
    const busy = () =>
      conflict(
        'SB_ERR_AGENT_RUN_ACTIVE',
        `Session '${ids.session}' of agent '${ids.agent}' already has a run in progress; cancel it or reconnect to its stream`,
      );
    // Reserved synchronously, so two requests for one session cannot both pass the check.
    if (this.local.has(key) || this.starting.has(key)) throw busy();
    this.starting.add(key);
    try {
      if (this.isActive(await this.events.getRun(ids.agent, ids.session))) throw busy();
      return await this.launch(key, ids, first, execute);
    } finally {
      this.starting.delete(key);
    }
  }

  private async launch(
    key: string,
    ids: { agent: string; session: string; actor: string },
    first: Emit,
    execute: (emit: Emit, signal: AbortSignal) => Promise<ChatResponse>,
  ): Promise<string> {
    const record: RunRecord = {
      run_id: randomUUID(),
      agent_name: ids.agent,
      session_id: ids.session,
      actor_id: ids.actor,
      status: 'running',
      boot_id: this.bootId,
      heartbeat_at: Date.now(),
      started_at: new Date().toISOString(),
      event_count: 0,
    };
    await this.events.putRun(record);
    const log = new RunLog(this.events, record, this.s.flush_ms, (err) =>
      this.log.warn({ err, run_id: record.run_id }, 'agent run event log write failed'),
    );
    const run: LocalRun = {
      log,
      controller: new AbortController(),
      subscribers: new Set([first]),
      done: Promise.resolve(),
    };
    this.local.set(key, run);
    const emit: Emit = (ev) => {
      log.append(ev);
      for (const s of run.subscribers) {
        try {
          s(ev);
        } catch {
          run.subscribers.delete(s); // a broken client must not stop the run
        }
      }
    };
    emit({ type: 'stream_start', session_id: ids.session, run_id: record.run_id });
    run.done = (async () => {
      let status: RunRecord['status'] = 'done';
      try {
        const r = await execute(emit, run.controller.signal);
        emit({ type: 'done', ...r });
      } catch (err) {
        if (err instanceof RunCancelled) {
          status = 'cancelled';
          emit({ type: 'cancelled', session_id: ids.session });
        } else {
          status = 'error';
          const detail = (err as { detail?: unknown }).detail;
          emit({
            type: 'error',
            detail: typeof detail === 'string' ? detail : (err as Error).message || 'The run failed',
          });
        }
      }
      await log.flush({ status, ended_at: new Date().toISOString() });
      this.local.delete(key);
    })();
    return record.run_id;
  }

  unsubscribe(agent: string, session: string, fn: Emit): void {
    this.local.get(runKey(agent, session))?.subscribers.delete(fn);
  }

  /** Cancel the active run of a session, here or on another replica; resolves when it has stopped. */
  async cancel(agent: string, session: string): Promise<string> {
    const mine = this.local.get(runKey(agent, session));
    if (mine) {
      mine.controller.abort();
      await mine.done;
      return mine.log.record.run_id;
    }
    const rec = await this.events.getRun(agent, session);
    if (!rec || !this.isActive(rec))
      throw notFound('SB_ERR_AGENT_NO_ACTIVE_RUN', `Session '${session}' of agent '${agent}' has no active run`);
    await this.events.requestCancel(rec.run_id);
    const deadline = Date.now() + this.s.stale_after_ms + this.s.heartbeat_ms;
    while (Date.now() < deadline) {
      await pause(this.s.poll_ms);
      const now = await this.events.getRun(agent, session);
      if (!now || now.run_id !== rec.run_id || now.status !== 'running') break;
    }
    return rec.run_id;
  }

  /**
   * Replay the session's latest run from the store, then follow it while it is
   * active. When it was left behind by a process that is gone, wait (up to
   * resume_wait_ms) for a new run on the session and follow that one.
   */
  async *follow(agent: string, session: string, signal: AbortSignal): AsyncGenerator<ChatEvent> {
    let runId: string | undefined;
    let cursor = 0;
    let waitingSince: number | undefined;
    while (!signal.aborted) {
      const rec = await this.events.getRun(agent, session);
      if (rec && rec.run_id !== runId) {
        if (runId !== undefined) yield { type: 'run_resumed', run_id: rec.run_id };
        runId = rec.run_id;
        cursor = 0;
        waitingSince = undefined;
      }
      if (rec) {
        const evs = await this.events.readEvents(rec.run_id, cursor, rec.event_count);
        for (const ev of evs) {
          cursor++;
          yield ev;
          if (TERMINAL_EVENTS.has(ev.type)) return;
        }
        // An inactive run with events left to read keeps going only while reads make progress (expired events end it).
        if (this.isActive(rec) || (cursor < rec.event_count && evs.length > 0)) {
          await pause(this.s.poll_ms, signal);
          continue;
        }
      }
      waitingSince ??= Date.now();
      if (Date.now() - waitingSince >= this.s.resume_wait_ms) return;
      await pause(Math.min(this.s.poll_ms * 5, this.s.resume_wait_ms), signal);
    }
  }

  /** Heartbeat for every local run, and pick up cancellations asked for on other replicas. */
  private async beat(): Promise<void> {
    for (const run of this.local.values()) {
      try {
        if (await this.events.cancelRequested(run.log.record.run_id)) run.controller.abort();
        await run.log.flush();
      } catch (err) {
        this.log.warn({ err }, 'agent run heartbeat failed');
      }
    }
  }

  /** On shutdown: stop the heartbeat and cancel local runs so their turns are stored. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const runs = [...this.local.values()];
    for (const r of runs) r.controller.abort();
    const giveUp = new AbortController();
    await Promise.race([Promise.allSettled(runs.map((r) => r.done)), pause(5000, giveUp.signal)]);
    giveUp.abort();
  }
}
