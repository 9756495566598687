import { Type, type Static } from '@sinclair/typebox';

/** Agent names become tool names (`call_<name>`) and URL segments, so they stay tool-safe. */
export const AgentName = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,58}$',
  description: 'Letters, digits, - and _; at most 59 characters',
});

export const PrimitiveConfig = Type.Object(
  {
    enabled: Type.Boolean({ default: false }),
    /** Tool names to offer (default: every tool of the primitive). For `agents`: the sub-agent names. */
    tools: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /** Memory namespace; `{agent_name}` and `{user_id}` are expanded. Default `agent:{agent_name}`. */
    namespace: Type.Optional(Type.String({ minLength: 1 })),
    shared_namespaces: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /** Tools: MCP servers whose tools the agent gets as its own (`{server}__{tool}`); qualified names in `tools` add single ones. */
    servers: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /** Browser: leave the run's session open when the run ends. */
    keep_session: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
export type PrimitiveConfig = Static<typeof PrimitiveConfig>;

export const Hooks = Type.Object(
  { auto_memory: Type.Boolean({ default: true }), auto_trace: Type.Boolean({ default: true }) },
  { additionalProperties: false },
);

const specFields = {
  model: Type.String({ minLength: 1 }),
  description: Type.String({ default: '' }),
  system_prompt: Type.String({ default: 'You are a helpful assistant.' }),
  primitives: Type.Record(Type.String(), PrimitiveConfig, { default: {} }),
  hooks: Type.Object(
    { auto_memory: Type.Optional(Type.Boolean()), auto_trace: Type.Optional(Type.Boolean()) },
    { additionalProperties: false, default: {} },
  ),
  max_turns: Type.Integer({ minimum: 1, maximum: 200, default: 20 }),
  temperature: Type.Number({ minimum: 0, maximum: 2, default: 1.0 }),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  provider_overrides: Type.Record(Type.String(), Type.String({ minLength: 1 }), { default: {} }),
  shared_namespaces: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  shared_with: Type.Array(Type.String({ minLength: 1 }), {
    default: [],
    description: '[] (owner only), ["*"] (everyone) or group names',
  }),
  /** The reference's flag; agent runs are always recorded and replayable here (ANCHOR-FACTS), so it is kept as given. */
  checkpointing_enabled: Type.Optional(
    Type.Boolean({ description: 'Accepted for reference clients; runs are always checkpointed here' }),
  ),
};

/** A partial update must not fill absent fields with defaults. */
function withoutDefault<T extends object>(schema: T): T {
  const copy = { ...schema } as T & { default?: unknown };
  delete copy.default;
  return copy;
}

export const CreateAgentRequest = Type.Object({ name: AgentName, ...specFields }, { additionalProperties: false });
export type CreateAgentRequest = Static<typeof CreateAgentRequest>;

export const UpdateAgentRequest = Type.Partial(
  Type.Object(
    Object.fromEntries(Object.entries(specFields).map(([k, v]) => [k, withoutDefault(v)])) as typeof specFields,
    { additionalProperties: false },
  ),
  { additionalProperties: false },
);
export type UpdateAgentRequest = Static<typeof UpdateAgentRequest>;

export const AgentSpec = Type.Object({
  name: Type.String(),
  model: Type.String(),
  description: Type.String(),
  system_prompt: Type.String(),
  primitives: Type.Record(Type.String(), PrimitiveConfig),
  hooks: Hooks,
  max_turns: Type.Integer(),
  temperature: Type.Number(),
  max_tokens: Type.Optional(Type.Integer()),
  provider_overrides: Type.Record(Type.String(), Type.String()),
  shared_namespaces: Type.Array(Type.String()),
  shared_with: Type.Array(Type.String()),
  checkpointing_enabled: Type.Optional(Type.Boolean()),
  owner_id: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type AgentSpec = Static<typeof AgentSpec>;

export const AgentList = Type.Object({ agents: Type.Array(AgentSpec), total: Type.Integer() });
export const NameParams = Type.Object({ name: Type.String() });
export const SessionParams = Type.Object({ name: Type.String(), session_id: Type.String() });
export const Deleted = Type.Object({
  status: Type.Optional(Type.Literal('deleted')),
  deleted: Type.Boolean(),
  name: Type.Optional(Type.String()),
  session_id: Type.Optional(Type.String()),
});

export const ChatRequest = Type.Object(
  {
    message: Type.String({ minLength: 1 }),
    session_id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$' })),
  },
  { additionalProperties: false },
);
export type ChatRequest = Static<typeof ChatRequest>;

export const ChatResponse = Type.Object({
  response: Type.String(),
  session_id: Type.String(),
  agent_name: Type.String(),
  turns_used: Type.Integer(),
  tools_called: Type.Array(Type.String()),
  artifacts: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  metadata: Type.Record(Type.String(), Type.Unknown()),
});
export type ChatResponse = Static<typeof ChatResponse>;

export const HistoryResponse = Type.Object({
  agent_name: Type.String(),
  session_id: Type.String(),
  messages: Type.Array(Type.Object({ role: Type.String(), content: Type.String() })),
});

export const SessionSummary = Type.Object({
  session_id: Type.String(),
  agent_name: Type.String(),
  actor_id: Type.String(),
  message_count: Type.Integer(),
  last_activity: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('idle')]),
});
export type SessionSummary = Static<typeof SessionSummary>;
export const SessionList = Type.Object({ agent_name: Type.String(), sessions: Type.Array(SessionSummary) });
export const CleanupQuery = Type.Object({ keep: Type.Integer({ minimum: 0, default: 5 }) });
export const CleanupResponse = Type.Object({
  agent_name: Type.String(),
  deleted: Type.Array(Type.String()),
  kept: Type.Array(Type.String()),
});
export const StatusResponse = Type.Object({
  agent_name: Type.String(),
  session_id: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('idle')]),
  run_id: Type.Optional(Type.String()),
});
export const CancelResponse = Type.Object({
  agent_name: Type.String(),
  session_id: Type.String(),
  run_id: Type.String(),
  status: Type.Literal('cancelled'),
});

export const CatalogTool = Type.Object({
  name: Type.String(),
  description: Type.String(),
  input_schema: Type.Record(Type.String(), Type.Unknown()),
});
export const ToolCatalogResponse = Type.Object({ primitives: Type.Record(Type.String(), Type.Array(CatalogTool)) });
export const AgentToolList = Type.Object({
  agent_name: Type.String(),
  tools: Type.Array(
    Type.Object({ name: Type.String(), description: Type.String(), primitive: Type.String(), provider: Type.String() }),
  ),
});
export const AgentMemoryResponse = Type.Object({
  agent_name: Type.String(),
  memory_enabled: Type.Boolean(),
  provider: Type.Union([Type.String(), Type.Null()]),
  stores: Type.Array(
    Type.Object({
      namespace: Type.String(),
      shared: Type.Boolean(),
      total: Type.Integer(),
      records: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
});

/** SSE routes document their body as text; each line is `data: <json>`. */
export const EventStream = {
  description: 'text/event-stream of `data: <json>` lines',
  content: { 'text/event-stream': { schema: Type.String() } },
};
