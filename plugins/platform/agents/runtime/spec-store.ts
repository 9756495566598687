import { conflict, notFound, unprocessable } from '../../../../core/errors.ts';
import { isPrimitive } from '../../../../core/primitives.ts';
import type { Principal } from '../../../../core/primitives/auth.ts';
import type { Collection, Store } from '../../../../core/store.ts';
import type { AgentSpec, CreateAgentRequest, UpdateAgentRequest } from '../schemas.ts';
import { assertChange, assertUse, canUse } from './access.ts';

/** Tool sets that are not primitives: sub-agents as tools, and agent management. */
const AGENT_KEYS = ['agents', 'agent_management'];

/** Checks Ajv cannot express: names of primitives and of sub-agents. */
function validateSemantics(spec: Pick<AgentSpec, 'provider_overrides' | 'primitives' | 'name'>): void {
  const problems: Array<{ loc: string[]; msg: string; type: string }> = [];
  for (const key of Object.keys(spec.provider_overrides)) {
    if (!isPrimitive(key))
      problems.push({
        loc: ['body', 'provider_overrides', key],
        msg: `'${key}' is not a primitive`,
        type: 'value_error',
      });
  }
  for (const key of Object.keys(spec.primitives)) {
    if (!isPrimitive(key) && !AGENT_KEYS.includes(key)) {
      problems.push({
        loc: ['body', 'primitives', key],
        msg: `'${key}' is not a primitive (or one of ${AGENT_KEYS.join(', ')})`,
        type: 'value_error',
      });
    }
  }
  for (const sub of spec.primitives.agents?.tools ?? []) {
    if (sub === spec.name)
      problems.push({
        loc: ['body', 'primitives', 'agents', 'tools'],
        msg: 'an agent cannot list itself as a sub-agent',
        type: 'value_error',
      });
  }
  if (problems.length) throw unprocessable('SB_ERR_AGENT_INVALID', problems);
}

/** Agent specs in the core store, with owner and sharing rules applied per caller. */
export class AgentSpecs {
  private readonly col: Collection<AgentSpec>;

  constructor(store: Store) {
    this.col = store.collection<AgentSpec>('agents');
  }

  async create(req: CreateAgentRequest, who: Principal): Promise<AgentSpec> {
    const now = new Date().toISOString();
    const spec: AgentSpec = {
      ...req,
      hooks: { auto_memory: req.hooks.auto_memory ?? true, auto_trace: req.hooks.auto_trace ?? true },
      owner_id: who.id,
      created_at: now,
      updated_at: now,
    };
    validateSemantics(spec);
    if (await this.col.get(spec.name)) throw conflict('SB_ERR_AGENT_EXISTS', `Agent '${spec.name}' already exists`);
    await this.col.set(spec.name, spec);
    return spec;
  }

  /** The spec without an access check (for the runtime, after the caller was checked). */
  async raw(name: string): Promise<AgentSpec | undefined> {
    return this.col.get(name);
  }

  async get(name: string, who: Principal): Promise<AgentSpec> {
    const spec = await this.col.get(name);
    if (!spec) throw notFound('SB_ERR_AGENT_NOT_FOUND', `Agent '${name}' not found`);
    assertUse(spec, who);
    return spec;
  }

  async list(who: Principal): Promise<AgentSpec[]> {
    const out: AgentSpec[] = [];
    for await (const [, spec] of this.col.entries()) if (canUse(spec, who)) out.push(spec);
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  async update(name: string, patch: UpdateAgentRequest, who: Principal): Promise<AgentSpec> {
    const current = await this.get(name, who);
    assertChange(current, who);
    const next: AgentSpec = {
      ...current,
      ...patch,
      hooks: { ...current.hooks, ...(patch.hooks ?? {}) } as AgentSpec['hooks'],
      name: current.name,
      owner_id: current.owner_id,
      created_at: current.created_at,
      updated_at: new Date().toISOString(),
    };
    validateSemantics(next);
    await this.col.set(name, next);
    return next;
  }

  async delete(name: string, who: Principal): Promise<void> {
    const current = await this.get(name, who);
    assertChange(current, who);
    await this.col.delete(name);
  }
}
