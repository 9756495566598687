import { canUse } from '../access.ts';
import type { ToolGroup, ToolSpec } from '../catalog.ts';
import { str } from './memory-namespaces.ts';

export const MAX_DELEGATION_DEPTH = 3;

const input_schema = {
  type: 'object',
  properties: { message: { type: 'string', description: 'The task or question for the agent' } },
  required: ['message'],
};

function callTool(name: string, description: string): ToolSpec {
  return {
    name: `call_${name}`,
    description: `Delegate to agent '${name}'${description ? `: ${description}` : ''}. Returns its answer.`,
    input_schema,
  };
}

/**
 * Agent-as-tool: `primitives.agents = {enabled: true, tools: [names]}` gives one
 * `call_<name>` per sub-agent. Delegation deeper than MAX_DELEGATION_DEPTH is
 * refused as a tool error the model can read.
 */
const agentsGroup: ToolGroup = {
  key: 'agents',
  primitive: 'agents',
  async catalog({ principal, specs }) {
    return (await specs.list(principal)).map((s) => callTool(s.name, s.description));
  },
  async bind(env) {
    const cfg = env.agent.primitives.agents;
    if (!cfg?.enabled) return [];
    const names = cfg.tools ?? [];
    const subs = await Promise.all(names.map((n) => env.specs.raw(n)));
    return names.map((name, i) => ({
      ...callTool(name, subs[i]?.description ?? ''),
      primitive: 'agents',
      provider: 'switchboard',
      run: async (input, call) => {
        const sub = await env.specs.raw(name);
        if (!sub || !canUse(sub, env.principal))
          throw new Error(`agent '${name}' does not exist or is not shared with you`);
        if (env.depth + 1 > MAX_DELEGATION_DEPTH)
          throw new Error(`delegation depth limit (${MAX_DELEGATION_DEPTH}) reached; answer without calling '${name}'`);
        return env.runSubAgent(name, str(input, 'message')!, call);
      },
    }));
  },
};

export default agentsGroup;
