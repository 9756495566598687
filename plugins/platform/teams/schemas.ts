import { Type, type Static } from '@sinclair/typebox';

/** Team and member names become URL segments and tool names, like agent names. */
const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,58}$';
export const TeamName = Type.String({
  pattern: NAME_PATTERN,
  description: 'Letters, digits, - and _; at most 59 characters',
});
const AgentRef = Type.String({ pattern: NAME_PATTERN, description: 'Name of an agent' });

/**
 * Defaults for the run limits. The reference ignores both settings
 * (ANCHOR-FACTS); Switchboard enforces them, so they get bounded defaults.
 */
export const DEFAULT_GLOBAL_MAX_TURNS = 100;
export const DEFAULT_GLOBAL_TIMEOUT_SECONDS = 600;

const specFields = {
  description: Type.String({ default: '', maxLength: 4096 }),
  planner: AgentRef,
  synthesizer: AgentRef,
  workers: Type.Array(AgentRef, { minItems: 1, maxItems: 64, uniqueItems: true }),
  global_max_turns: Type.Integer({ minimum: 1, maximum: 10000, default: DEFAULT_GLOBAL_MAX_TURNS }),
  global_timeout_seconds: Type.Integer({ minimum: 1, maximum: 86400, default: DEFAULT_GLOBAL_TIMEOUT_SECONDS }),
  shared_memory_namespace: Type.Union(
    [
      Type.String({ minLength: 1, maxLength: 256, description: 'May contain {team_name}, expanded at run time' }),
      Type.Null(),
    ],
    {
      default: null,
    },
  ),
  shared_with: Type.Array(Type.String({ minLength: 1 }), {
    default: [],
    description: '[] (owner only), ["*"] (everyone) or group names',
  }),
  max_concurrent: Type.Union([Type.Integer({ minimum: 1, maximum: 64 }), Type.Null()], {
    default: null,
    description: 'Most tasks a run executes at once; null: one per worker (as the exported script does)',
  }),
  /** The reference's flag; runs here are always recorded in the store and resumable, so it changes nothing and is kept as given. */
  checkpointing_enabled: Type.Boolean({
    default: false,
    description: 'Accepted for reference clients; runs are always checkpointed here',
  }),
};

export const CreateTeamRequest = Type.Object({ name: TeamName, ...specFields }, { additionalProperties: false });
export type CreateTeamRequest = Static<typeof CreateTeamRequest>;

/** A partial update: absent fields keep their value, so no defaults here. */
export const UpdateTeamRequest = Type.Object(
  {
    description: Type.Optional(Type.String({ maxLength: 4096 })),
    planner: Type.Optional(AgentRef),
    synthesizer: Type.Optional(AgentRef),
    workers: Type.Optional(Type.Array(AgentRef, { minItems: 1, maxItems: 64, uniqueItems: true })),
    global_max_turns: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
    global_timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
    shared_memory_namespace: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()])),
    shared_with: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    max_concurrent: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 64 }), Type.Null()])),
    checkpointing_enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type UpdateTeamRequest = Static<typeof UpdateTeamRequest>;

export const TeamSpec = Type.Object({
  name: Type.String(),
  description: Type.String(),
  planner: Type.String(),
  synthesizer: Type.String(),
  workers: Type.Array(Type.String()),
  global_max_turns: Type.Integer(),
  global_timeout_seconds: Type.Integer(),
  shared_memory_namespace: Type.Union([Type.String(), Type.Null()]),
  shared_with: Type.Array(Type.String()),
  /** Optional in stored specs: teams created before the field read as null. */
  max_concurrent: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  checkpointing_enabled: Type.Optional(Type.Boolean()),
  owner_id: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type TeamSpec = Static<typeof TeamSpec>;

export const TeamList = Type.Object({ teams: Type.Array(TeamSpec), total: Type.Integer() });
export const TeamParams = Type.Object({ name: Type.String() });
export const RunParams = Type.Object({ name: Type.String(), id: Type.String() });
export const TaskParams = Type.Object({ name: Type.String(), id: Type.String(), task_id: Type.String() });
export const Deleted = Type.Object({ status: Type.Literal('deleted'), deleted: Type.Boolean(), name: Type.String() });

/** Spec 2.3 run request and response. */
export const RunRequest = Type.Object(
  { message: Type.String({ minLength: 1, pattern: '\\S', description: 'The request; not empty or blank' }) },
  { additionalProperties: false },
);
export const RunResponse = Type.Object({
  response: Type.String(),
  team_run_id: Type.String(),
  team_name: Type.String(),
  phase: Type.String(),
  tasks_created: Type.Integer(),
  tasks_completed: Type.Integer(),
  workers_used: Type.Array(Type.String()),
});
export const RunStatus = Type.Union([Type.Literal('running'), Type.Literal('idle')]);
export const RunList = Type.Object({
  team_name: Type.String(),
  runs: Type.Array(
    Type.Object({
      team_run_id: Type.String(),
      status: Type.String(),
      phase: Type.String(),
      started_at: Type.String(),
      ended_at: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});
export const Task = Type.Object({
  id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  status: Type.String({ description: 'pending, in_progress, done or failed' }),
  assigned_to: Type.Union([Type.String(), Type.Null()]),
  result: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the task failed' }),
  depends_on: Type.Array(Type.String()),
  attempts: Type.Integer(),
});
export const TaskBoard = Type.Object({
  team_run_id: Type.String(),
  team_name: Type.String(),
  status: Type.String({
    description: 'running, done, failed, cancelled, timed_out, or interrupted (its process stopped)',
  }),
  phase: Type.String(),
  tasks: Type.Array(Task),
  tasks_created: Type.Integer(),
  tasks_completed: Type.Integer(),
  response: Type.Union([Type.String(), Type.Null()]),
  turns_used: Type.Integer(),
  limit: Type.Union([Type.String(), Type.Null()], { description: 'The limit that stopped the run, if one did' }),
});
export const RunStatusResponse = Type.Object({
  team_run_id: Type.String(),
  team_name: Type.String(),
  status: RunStatus,
});
export const RunDeleted = Type.Object({ deleted: Type.Boolean(), team_run_id: Type.String() });
export const CancelResponse = Type.Object({
  team_run_id: Type.String(),
  team_name: Type.String(),
  status: Type.Literal('cancelled'),
});
export const RunEvents = Type.Object({
  team_run_id: Type.String(),
  status: Type.String(),
  events: Type.Array(Type.Record(Type.String(), Type.Unknown())),
});
export const EventStream = {
  description: 'text/event-stream of `data: <json>` lines',
  content: { 'text/event-stream': { schema: Type.String() } },
};
