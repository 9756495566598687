import type { AgentRuntime, Caller } from '../../agents/runtime/runtime.ts';
import type { TeamSpec } from '../schemas.ts';
import { TeamStop, type TeamEventBody, type TeamPhase } from './events.ts';
import { Budget } from './limits.ts';
import { createTaskTool, extractTaskList, toTasks, validateGraph, type PlannedTask } from './planner.ts';
import { planPrompt, replanPrompt, resultLines } from './prompts.ts';
import type { TeamRunLog } from './run-log.ts';
import type { TaskRecord, TeamRunStore } from './run-store.ts';
import { execute, failTask } from './scheduler.ts';
import { synthesize } from './synth.ts';
import { traceTeamRun } from './team-trace.ts';
import { prepareFresh, runTask, type SpecOf } from './worker.ts';

export interface TeamRunEnv {
  runtime: AgentRuntime;
  store: TeamRunStore;
  caller: Caller;
  team: TeamSpec;
  log: TeamRunLog;
  bootId: string;
  maxReplans: number;
  tokenMs: number;
  /** Aborted on cancel (here or asked for from another replica). */
  signal: AbortSignal;
}

export type RunMode = { kind: 'full' } | { kind: 'retry'; taskId: string; resume: string };

export const expandNamespace = (team: TeamSpec) =>
  team.shared_memory_namespace?.replaceAll('{team_name}', team.name) ?? null;

const doneTasks = (tasks: TaskRecord[]) => tasks.filter((t) => t.status === 'done');

export function runSummary(rec: {
  team_run_id: string;
  team_name: string;
  phase: string;
  response: string | null;
  tasks: TaskRecord[];
}) {
  const done = doneTasks(rec.tasks);
  return {
    response: rec.response ?? '',
    team_run_id: rec.team_run_id,
    team_name: rec.team_name,
    phase: rec.phase,
    tasks_created: rec.tasks.length,
    tasks_completed: done.length,
    workers_used: [...new Set(done.map((t) => t.assigned_to!))].sort(),
  };
}

/** Ask the planner for tasks: `create_task` calls, or else the JSON list in its answer. */
async function plan(
  env: TeamRunEnv,
  specOf: SpecOf,
  budget: Budget,
  prompt: string,
  first: boolean,
): Promise<PlannedTask[]> {
  const spec = await specOf(env.team.planner);
  if (!spec) throw new Error(`planner agent '${env.team.planner}' no longer exists`);
  const session = `${env.log.record.team_run_id}-planner`;
  // Replanning continues the planner's session, so it sees its first plan.
  const prepared = first
    ? await prepareFresh(env.runtime, spec, env.caller, session)
    : await env.runtime.prepare(spec, env.caller, session);
  const collected: PlannedTask[] = [];
  const r = await env.runtime.chat({ ...prepared, llm: budget.wrap(prepared.llm) }, prompt, {
    signal: budget.signal,
    extraTools: [createTaskTool(collected, env.team.workers)],
  });
  if (collected.length) return collected;
  const listed = extractTaskList(r.response);
  if (!listed)
    throw new Error(
      `the planner '${env.team.planner}' created no tasks and its answer holds no JSON task list: ${JSON.stringify(r.response.slice(0, 200))}`,
    );
  return listed;
}

/**
 * One team run, or the retry of one task of a finished run: phases, tasks
 * and events on the run's log; ends with a `done` event whose phase says how
 * it ended. Never throws: every outcome is recorded.
 */
export async function runTeam(env: TeamRunEnv, mode: RunMode): Promise<void> {
  const { log, team } = env;
  const rec = log.record;
  const budget = new Budget(team.global_max_turns, team.global_timeout_seconds, env.signal);
  const emit = (ev: TeamEventBody) => log.emit(ev);
  const phase = (p: TeamPhase) => {
    rec.phase = p;
    emit({ type: 'phase_change', phase: p });
  };
  const board = new Map(rec.tasks.map((t) => [t.id, t]));
  const specs = new Map<string, ReturnType<SpecOf>>();
  const specOf: SpecOf = (name) => {
    let s = specs.get(name);
    if (!s) specs.set(name, (s = env.runtime.specs.raw(name)));
    return s;
  };
  const addTasks = (planned: PlannedTask[]) => {
    const fresh = toTasks(planned, new Set(board.keys()));
    for (const t of fresh) {
      board.set(t.id, t);
      rec.tasks.push(t);
    }
    const invalid = validateGraph(fresh, team.workers, board);
    emit({
      type: 'tasks_created',
      count: fresh.length,
      tasks: fresh.map(({ id, title, description, assigned_to, depends_on }) => ({
        id,
        title,
        description,
        assigned_to,
        depends_on,
      })),
    });
    for (const t of invalid) emit({ type: 'task_failed', agent: t.assigned_to, task_id: t.id, error: t.error! });
    log.schedule();
  };
  const resumes = new Map<string, string>();
  const schedulerEnv = {
    log,
    store: env.store,
    budget,
    bootId: env.bootId,
    maxConcurrent: team.max_concurrent ?? team.workers.length,
    preclaimed: new Set(mode.kind === 'retry' ? [mode.taskId] : []),
    work: (t: TaskRecord) =>
      runTask(
        {
          runtime: env.runtime,
          caller: env.caller,
          budget,
          log,
          namespace: expandNamespace(team),
          tokenMs: env.tokenMs,
          specOf,
        },
        t,
        board,
        resumes.get(t.id),
      ),
  };
  let finalPhase: 'done' | 'failed' | 'cancelled' | 'timed_out' = 'done';
  let detail: string | undefined;
  try {
    if (mode.kind === 'full') {
      emit({ type: 'team_start', team_run_id: rec.team_run_id, team_name: rec.team_name });
      phase('planning');
      addTasks(await plan(env, specOf, budget, planPrompt(team.workers, rec.message), true));
      phase('execution');
      await execute(schedulerEnv, board);
      budget.check();
      while (rec.tasks.some((t) => t.status === 'failed') && rec.replans < env.maxReplans) {
        rec.replans++;
        phase('replanning');
        const before = rec.tasks.length;
        addTasks(
          await plan(env, specOf, budget, replanPrompt(team.workers, rec.message, resultLines(rec.tasks)), false),
        );
        if (rec.tasks.length === before) break;
        phase('execution');
        await execute(schedulerEnv, board);
        budget.check();
      }
    } else {
      const task = board.get(mode.taskId)!;
      emit({ type: 'task_retry', agent: task.assigned_to!, task_id: task.id, attempt: task.attempts + 1 });
      resumes.set(task.id, mode.resume);
      // The task and every failed task that waits on it, directly or not, run again.
      const again = new Set([task.id]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const t of rec.tasks) {
          if (t.status === 'failed' && !again.has(t.id) && t.depends_on.some((d) => again.has(d))) {
            again.add(t.id);
            grew = true;
          }
        }
      }
      for (const t of rec.tasks)
        if (again.has(t.id)) Object.assign(t, { status: 'pending', result: null, error: null });
      phase('execution');
      await execute(schedulerEnv, board);
      budget.check();
    }
    phase('synthesis');
    rec.response = await synthesize(
      env.runtime,
      specOf,
      env.caller,
      budget,
      rec.team_run_id,
      team.synthesizer,
      rec.message,
      rec.tasks,
      mode.kind === 'retry' ? rec.tasks.reduce((n, t) => n + t.attempts, 0) : 0,
    );
    budget.check();
  } catch (err) {
    const stop = budget.stop ?? (err instanceof TeamStop ? err : undefined);
    if (stop) {
      finalPhase = stop.phase;
      detail = stop.message;
      if (stop.phase === 'cancelled') emit({ type: 'cancelled', team_run_id: rec.team_run_id });
    } else {
      finalPhase = 'failed';
      detail = (err as { detail?: string }).detail ?? (err as Error).message ?? String(err);
      emit({ type: 'error', detail });
    }
    for (const t of rec.tasks) if (t.status === 'in_progress') failTask(log, t, detail);
  } finally {
    budget.close();
  }
  rec.turns_used += budget.turns;
  rec.limit = budget.stop?.limit ?? null;
  phase(finalPhase);
  if (finalPhase !== 'done') rec.response = detail ?? null;
  rec.status = finalPhase;
  rec.ended_at = new Date().toISOString();
  if (mode.kind === 'retry') emit({ type: 'retry_done', task_id: mode.taskId, status: board.get(mode.taskId)!.status });
  emit({
    type: 'done',
    ...runSummary(rec),
    phase: finalPhase,
    turns_used: rec.turns_used,
    ...(rec.limit ? { limit: rec.limit } : {}),
    ...(detail ? { detail } : {}),
  });
  // After `done`, so a slow observability backend never delays the answer.
  await traceTeamRun(env, specOf, rec);
}
