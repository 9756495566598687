import { PRIMITIVES } from '../../../../../core/primitives.ts';
import { canChange, canUse } from '../access.ts';
import { pickTools, type BoundTool, type ToolGroup, type ToolSpec } from '../catalog.ts';
import { MAX_DELEGATION_DEPTH } from './agents.ts';
import { str } from './memory-namespaces.ts';

const obj = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required });

export const MANAGEMENT_TOOLS: ToolSpec[] = [
  {
    name: 'create_agent',
    description: 'Create a new agent owned by the caller (name, description, system_prompt; model defaults to yours).',
    input_schema: obj(
      {
        name: { type: 'string' },
        description: { type: 'string' },
        system_prompt: { type: 'string' },
        model: { type: 'string' },
      },
      ['name', 'system_prompt'],
    ),
  },
  { name: 'list_agents', description: 'List the agents you can use.', input_schema: obj({}, []) },
  {
    name: 'list_primitives',
    description: 'List the primitives and their available providers.',
    input_schema: obj({}, []),
  },
  {
    name: 'delete_agent',
    description: 'Delete an agent you own.',
    input_schema: obj({ name: { type: 'string' } }, ['name']),
  },
  {
    name: 'delegate_to',
    description: 'Send a task to another agent and get its answer.',
    input_schema: obj({ agent: { type: 'string' }, message: { type: 'string' } }, ['agent', 'message']),
  },
];

/** `primitives.agent_management.enabled`: an agent that builds and directs other agents, as the caller. */
const agentManagementGroup: ToolGroup = {
  key: 'agent_management',
  primitive: 'agents',
  catalog: async () => MANAGEMENT_TOOLS,
  async bind(env) {
    if (!env.agent.primitives.agent_management?.enabled) return [];
    const run: Record<string, BoundTool['run']> = {
      create_agent: async (i) => {
        const spec = await env.specs.create(
          {
            name: str(i, 'name')!,
            model: str(i, 'model', false) ?? env.agent.model,
            description: str(i, 'description', false) ?? '',
            system_prompt: str(i, 'system_prompt')!,
            primitives: {},
            hooks: {},
            max_turns: 20,
            temperature: 1.0,
            provider_overrides: {},
            shared_namespaces: [],
            shared_with: [],
          },
          env.principal,
        );
        return `Created agent '${spec.name}'.`;
      },
      list_agents: async () =>
        JSON.stringify(
          (await env.specs.list(env.principal)).map((s) => ({ name: s.name, description: s.description })),
        ),
      list_primitives: async () => JSON.stringify(PRIMITIVES),
      delete_agent: async (i) => {
        const name = str(i, 'name')!;
        const spec = await env.specs.raw(name);
        if (!spec || !canUse(spec, env.principal))
          throw new Error(`agent '${name}' does not exist or is not shared with you`);
        if (!canChange(spec, env.principal)) throw new Error(`only the owner of '${name}' may delete it`);
        if (name === env.agent.name) throw new Error('an agent cannot delete itself');
        await env.specs.delete(name, env.principal);
        return `Deleted agent '${name}'.`;
      },
      delegate_to: async (i, call) => {
        const name = str(i, 'agent')!;
        const sub = await env.specs.raw(name);
        if (!sub || !canUse(sub, env.principal))
          throw new Error(`agent '${name}' does not exist or is not shared with you`);
        if (env.depth + 1 > MAX_DELEGATION_DEPTH)
          throw new Error(`delegation depth limit (${MAX_DELEGATION_DEPTH}) reached`);
        return env.runSubAgent(name, str(i, 'message')!, call);
      },
    };
    return pickTools(MANAGEMENT_TOOLS, env.agent.primitives.agent_management.tools).map((t) => ({
      ...t,
      primitive: 'agents',
      provider: 'switchboard',
      run: run[t.name]!,
    }));
  },
};

export default agentManagementGroup;
