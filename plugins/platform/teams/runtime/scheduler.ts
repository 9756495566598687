import { TeamStop } from './events.ts';
import type { Budget } from './limits.ts';
import type { TeamRunLog } from './run-log.ts';
import type { TaskRecord, TeamRunStore } from './run-store.ts';

export interface SchedulerEnv {
  log: TeamRunLog;
  store: TeamRunStore;
  budget: Budget;
  bootId: string;
  maxConcurrent: number;
  /** Tasks whose next attempt was claimed already (a retry claims before it starts the run). */
  preclaimed: Set<string>;
  /** Runs one claimed task to its result (throws on failure). */
  work(task: TaskRecord): Promise<string>;
}

export function failTask(log: TeamRunLog, t: TaskRecord, error: string): void {
  t.status = 'failed';
  t.error = error;
  log.emit({ type: 'task_failed', agent: t.assigned_to, task_id: t.id, error });
  log.schedule();
}

/**
 * Run the board's pending tasks: a task whose dependencies are done is ready,
 * ready tasks run in parallel up to `max_concurrent`, each after an atomic
 * claim in the store, and a failed task fails the tasks that wait on it. When
 * the run is stopped (cancel, a limit), tasks still in progress are failed
 * with the reason and nothing new starts.
 */
export async function execute(env: SchedulerEnv, board: Map<string, TaskRecord>): Promise<void> {
  const { log, budget } = env;
  const tasks = () => [...board.values()];
  const running = new Map<string, Promise<void>>();
  const runOne = async (t: TaskRecord) => {
    try {
      const result = await env.work(t);
      budget.check(); // an answer that lands after the stop does not count
      t.status = 'done';
      t.result = result;
      t.error = null;
      log.emit({ type: 'task_completed', agent: t.assigned_to!, task_id: t.id, result });
    } catch (err) {
      const reason =
        budget.stop?.message ??
        (err instanceof TeamStop
          ? err.message
          : ((err as { detail?: string }).detail ?? (err as Error).message ?? String(err)));
      failTask(log, t, reason);
    } finally {
      running.delete(t.id);
      log.schedule();
    }
  };
  for (;;) {
    for (let changed = true; changed; ) {
      changed = false;
      for (const t of tasks()) {
        if (t.status !== 'pending') continue;
        const failed = t.depends_on.find((d) => board.get(d)?.status === 'failed');
        if (failed !== undefined) {
          failTask(log, t, `dependency '${failed}' failed`);
          changed = true;
        }
      }
    }
    if (budget.stop) break;
    for (const t of tasks()) {
      if (running.size >= env.maxConcurrent || budget.stop) break;
      if (t.status !== 'pending' || !t.depends_on.every((d) => board.get(d)?.status === 'done')) continue;
      const attempt = t.attempts + 1;
      t.status = 'in_progress'; // reserved before the await, so this loop cannot pick it twice
      const won =
        env.preclaimed.delete(t.id) || (await env.store.claim(log.record.team_run_id, t.id, attempt, env.bootId));
      if (!won) {
        failTask(log, t, `attempt ${attempt} was claimed by another process`);
        continue;
      }
      t.attempts = attempt;
      log.emit({ type: 'task_claimed', agent: t.assigned_to!, task_id: t.id, title: t.title, attempt });
      running.set(t.id, runOne(t));
    }
    if (running.size === 0) break;
    await Promise.race(running.values());
  }
  await Promise.allSettled([...running.values()]);
}
