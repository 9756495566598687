/**
 * Team stream events (ANCHOR-FACTS, issue 17). Every event carries `seq`, its
 * position in the run's log, so a client that reconnects can check it got each
 * event once and in order. A run's stream ends with `done`, whatever the
 * outcome: its `phase` says how it ended and `limit` which limit stopped it.
 */
export type TeamPhase =
  | 'planning'
  | 'execution'
  | 'replanning'
  | 'synthesis'
  | 'done'
  | 'failed'
  | 'cancelled'
  | 'timed_out';
export type TeamLimit = 'global_max_turns' | 'global_timeout_seconds';

export interface TaskView {
  id: string;
  title: string;
  description: string;
  assigned_to: string | null;
  depends_on: string[];
}

export type TeamEventBody =
  | { type: 'team_start'; team_run_id: string; team_name: string }
  | { type: 'phase_change'; phase: TeamPhase }
  | { type: 'tasks_created'; count: number; tasks: TaskView[] }
  | { type: 'task_claimed'; agent: string; task_id: string; title: string; attempt: number }
  | { type: 'task_completed'; agent: string; task_id: string; result: string }
  | { type: 'task_failed'; agent: string | null; task_id: string; error: string }
  | { type: 'worker_token'; agent: string; task_id: string; content: string }
  | { type: 'task_retry'; agent: string; task_id: string; attempt: number }
  | { type: 'retry_done'; task_id: string; status: string }
  | { type: 'cancelled'; team_run_id: string }
  | { type: 'error'; detail: string }
  | {
      type: 'done';
      response: string;
      team_run_id: string;
      team_name: string;
      phase: TeamPhase;
      tasks_created: number;
      tasks_completed: number;
      workers_used: string[];
      turns_used: number;
      limit?: TeamLimit;
      detail?: string;
    };

export type TeamEvent = TeamEventBody & { seq: number };
export type TeamEmit = (ev: TeamEventBody) => void;

/** Why a run stops before its end: the caller cancelled, or a limit was reached. */
export class TeamStop extends Error {
  constructor(
    readonly phase: 'cancelled' | 'timed_out' | 'failed',
    readonly limit?: TeamLimit,
    detail?: string,
  ) {
    super(detail ?? (phase === 'cancelled' ? 'The run was cancelled' : `The run stopped: ${limit} reached`));
    this.name = 'TeamStop';
  }
}
