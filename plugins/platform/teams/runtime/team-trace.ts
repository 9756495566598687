import type { ProviderBase } from '../../../../core/provider.ts';
import type { AgentRuntime, Caller } from '../../agents/runtime/runtime.ts';
import { sendTrace } from '../../agents/runtime/trace.ts';
import type { TeamSpec } from '../schemas.ts';
import type { TeamRunRecord } from './run-store.ts';
import type { SpecOf } from './worker.ts';

/**
 * `auto_trace` for a team run: one trace per run (`team:<name>`, session = the run id) with a span per task,
 * written when the planner agent traces (a team has no hooks of its own). The planner, workers and
 * synthesizer write their own traces per chat as agents; this one ties the run together. Best effort: a
 * failing observability provider never changes how the run ended.
 */
/** What tracing needs of a run's environment: a slice of team-run.ts's TeamRunEnv, spelled here so imports run one way. */
export interface TraceEnv {
  runtime: AgentRuntime;
  caller: Caller;
  team: TeamSpec;
}

export async function traceTeamRun(env: TraceEnv, specOf: SpecOf, rec: TeamRunRecord): Promise<void> {
  try {
    const planner = await specOf(env.team.planner);
    if (!planner?.hooks.auto_trace) return;
    const obs: ProviderBase = env.runtime.resolve(planner, env.caller, 'observability');
    const done = rec.tasks.filter((t) => t.status === 'done').length;
    await sendTrace(obs, {
      name: `team:${env.team.name}`,
      user_id: env.caller.principal.id,
      session_id: rec.team_run_id,
      input: rec.message,
      output: rec.response ?? '',
      tags: ['team', env.team.name],
      spans: rec.tasks.map((t) => ({
        name: t.title,
        output: t.result ?? t.error ?? null,
        metadata: { type: 'task', task_id: t.id, assigned_to: t.assigned_to, status: t.status, attempts: t.attempts },
      })),
      metadata: {
        team_run_id: rec.team_run_id,
        team_name: env.team.name,
        phase: rec.phase,
        turns_used: rec.turns_used,
        tasks_created: rec.tasks.length,
        tasks_completed: done,
        started_at: rec.started_at,
      },
    });
  } catch {
    // tracing is best effort by design (as for agents)
  }
}
