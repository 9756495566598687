import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';

const PolicySchema = Type.Object({
  actions: Type.Array(Type.Object({ action: Type.String(), method: Type.String(), path: Type.String() })),
  entities: Type.Object({
    principal: Type.String(),
    action: Type.String(),
    resource: Type.Record(Type.String(), Type.String()),
    context: Type.Record(Type.String(), Type.String()),
  }),
});

/** The mapping enforcement uses (policy-mapping.ts), so policy authors need not guess action names. */
const ENTITIES = {
  principal:
    'User::"<id>" (Service::"<id>" for service tokens), in Group::"<group>" for each group; attributes is_admin (Bool), type (String)',
  action: 'Action::"<primitive>:<operation>", one per route (see actions)',
  resource: {
    namespace: 'Namespace::"<namespace>" (memory records)',
    session_id: 'Session::"<id>"',
    memory_id: 'Memory::"<id>"',
    engine_id: 'Engine::"<id>"',
    'agents :name': 'Agent::"<name>"',
    'tools :name': 'Tool::"<name>"',
    'teams :name': 'Team::"<name>"',
    'llm body.model': 'Model::"<model>"',
    otherwise: 'Primitive::"<primitive>" (collection routes), Resource::"<primitive>/<name>" for other :name routes',
  },
  context: {
    ip: 'String: the caller address',
    time: 'Long: seconds since the epoch',
    hour_utc: 'Long: 0-23',
    provider: 'String: the X-Provider-<Primitive> / X-Provider header, or "default"',
    agent: 'Agent entity from X-Agent-Id (only when sent; test with `context has agent`)',
    arguments:
      'Record: tool arguments, for tools:invoke and tool calls inside agent and team runs (fractions as strings, nulls dropped)',
  },
};

const schema: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/schema',
    {
      schema: {
        tags: ['policy'],
        summary: 'Actions and entity mapping that enforcement uses',
        response: { 200: PolicySchema },
      },
    },
    async () => ({
      actions: app.policyActions,
      entities: ENTITIES,
    }),
  );
};
export default schema;
