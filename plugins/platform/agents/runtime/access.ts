import { forbidden } from '../../../../core/errors.ts';
import type { Principal } from '../../../../core/primitives/auth.ts';
import type { AgentSpec } from '../schemas.ts';

/** Read (and chat): the owner, an admin, everyone with `*`, or a member of a listed group. */
export function canUse(spec: Pick<AgentSpec, 'owner_id' | 'shared_with'>, who: Principal): boolean {
  if (who.is_admin || spec.owner_id === who.id) return true;
  return spec.shared_with.includes('*') || spec.shared_with.some((g) => who.groups.includes(g));
}

/** Change or delete: the owner or an admin; sharing grants use, not ownership. */
export function canChange(spec: Pick<AgentSpec, 'owner_id'>, who: Principal): boolean {
  return who.is_admin || spec.owner_id === who.id;
}

export function assertUse(spec: AgentSpec, who: Principal): void {
  if (!canUse(spec, who)) throw forbidden('SB_ERR_AGENT_FORBIDDEN', `Agent '${spec.name}' is not owned by or shared with '${who.id}'`);
}

export function assertChange(spec: AgentSpec, who: Principal): void {
  if (!canChange(spec, who)) throw forbidden('SB_ERR_AGENT_FORBIDDEN', `Only the owner of agent '${spec.name}' or an admin may change it`);
}
