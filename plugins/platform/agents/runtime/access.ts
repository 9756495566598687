import type { Principal } from '../../../../core/primitives/auth.ts';
import { assertChange as assertOwnerChange, assertUse as assertOwnerUse, mayChange, mayUse } from '../../ownership.ts';
import type { AgentSpec } from '../schemas.ts';

// The rule itself lives in plugins/platform/ownership.ts, shared by every platform resource.

/** Read (and chat): the owner, an admin, everyone with `*`, or a member of a listed group. */
export function canUse(spec: Pick<AgentSpec, 'owner_id' | 'shared_with'>, who: Principal): boolean {
  return mayUse(spec, who);
}

/** Change or delete: the owner or an admin; sharing grants use, not ownership. */
export function canChange(spec: Pick<AgentSpec, 'owner_id'>, who: Principal): boolean {
  return mayChange(spec, who);
}

export function assertUse(spec: AgentSpec, who: Principal): void {
  assertOwnerUse(spec, who, 'SB_ERR_AGENT_FORBIDDEN', `Agent '${spec.name}'`);
}

export function assertChange(spec: AgentSpec, who: Principal): void {
  assertOwnerChange(spec, who, 'SB_ERR_AGENT_FORBIDDEN', `Agent '${spec.name}'`);
}
