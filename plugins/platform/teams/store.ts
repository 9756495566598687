import { conflict, forbidden, notFound } from '../../../core/errors.ts';
import type { Principal } from '../../../core/primitives/auth.ts';
import type { Collection, Store } from '../../../core/store.ts';
import { mayChange, mayUse } from '../ownership.ts';
import type { CreateTeamRequest, TeamSpec, UpdateTeamRequest } from './schemas.ts';

/** Use (read, run): the owner, an admin, everyone with `*`, or a member of a listed group (ANCHOR-FACTS). */
export function canUse(spec: Pick<TeamSpec, 'owner_id' | 'shared_with'>, who: Principal): boolean {
  return mayUse(spec, who);
}

/** Change or delete: the owner or an admin; sharing grants use, not ownership. */
export function canChange(spec: Pick<TeamSpec, 'owner_id'>, who: Principal): boolean {
  return mayChange(spec, who);
}

/** Team specs in the core store (collection `teams`), with owner and sharing rules applied per caller. */
export class TeamSpecs {
  private readonly col: Collection<TeamSpec>;

  constructor(store: Store) {
    this.col = store.collection<TeamSpec>('teams');
  }

  async create(req: CreateTeamRequest, who: Principal): Promise<TeamSpec> {
    if (await this.col.get(req.name))
      throw conflict(
        'SB_ERR_TEAM_EXISTS',
        `Team '${req.name}' already exists; choose another name or update it with PUT`,
      );
    const now = new Date().toISOString();
    const spec: TeamSpec = {
      name: req.name,
      description: req.description ?? '',
      planner: req.planner,
      synthesizer: req.synthesizer,
      workers: [...req.workers],
      global_max_turns: req.global_max_turns,
      global_timeout_seconds: req.global_timeout_seconds,
      shared_memory_namespace: req.shared_memory_namespace ?? null,
      shared_with: [...(req.shared_with ?? [])],
      max_concurrent: req.max_concurrent ?? null,
      checkpointing_enabled: req.checkpointing_enabled ?? false,
      owner_id: who.id,
      created_at: now,
      updated_at: now,
    };
    await this.col.set(spec.name, spec);
    return spec;
  }

  /** The spec if the caller may use it: 404 when absent, 403 when not owned or shared (spec 5.3). */
  async get(name: string, who: Principal): Promise<TeamSpec> {
    const spec = await this.col.get(name);
    if (!spec) throw notFound('SB_ERR_TEAM_NOT_FOUND', `Team '${name}' not found`);
    if (!canUse(spec, who))
      throw forbidden('SB_ERR_TEAM_FORBIDDEN', `Team '${name}' is not owned by or shared with '${who.id}'`);
    return spec;
  }

  async list(who: Principal): Promise<TeamSpec[]> {
    const out: TeamSpec[] = [];
    for await (const [, spec] of this.col.entries()) if (canUse(spec, who)) out.push(spec);
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  private async changeable(name: string, who: Principal): Promise<TeamSpec> {
    const current = await this.get(name, who);
    if (!canChange(current, who))
      throw forbidden('SB_ERR_TEAM_FORBIDDEN', `Only the owner of team '${name}' or an admin may change it`);
    return current;
  }

  async update(name: string, patch: UpdateTeamRequest, who: Principal): Promise<TeamSpec> {
    const current = await this.changeable(name, who);
    const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<TeamSpec>;
    const next: TeamSpec = {
      ...current,
      ...defined,
      name: current.name,
      owner_id: current.owner_id,
      created_at: current.created_at,
      updated_at: new Date().toISOString(),
    };
    await this.col.set(name, next);
    return next;
  }

  async delete(name: string, who: Principal): Promise<void> {
    await this.changeable(name, who);
    await this.col.delete(name);
  }
}
