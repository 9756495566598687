import type { FastifyRequest } from 'fastify';
import { forbidden } from '../../core/errors.ts';
import type { Principal } from '../../core/primitives/auth.ts';
import type { Collection, Store } from '../../core/store.ts';

/**
 * The ownership rule of spec 5.3, in one place for every platform resource a
 * user creates: the owner or an admin may change or delete it; sharing
 * (`shared_with`: `*` or group names, where a resource has it) grants use,
 * never change. Anyone else gets a 403 that names the resource; existence is
 * not hidden (agents, teams and browser sessions have always answered 403).
 */
export interface Owned {
  owner_id: string | undefined;
  shared_with?: readonly string[];
}

/** Read and use: owner, admin, everyone with `*`, or a member of a listed group. */
export function mayUse(rec: Owned, who: Principal): boolean {
  if (who.is_admin || (rec.owner_id !== undefined && rec.owner_id === who.id)) return true;
  const shared = rec.shared_with ?? [];
  return shared.includes('*') || shared.some((g) => who.groups.includes(g));
}

/** Change or delete: the owner or an admin. A record nobody owns (made before owners were kept) is the admins'. */
export function mayChange(rec: Owned, who: Principal): boolean {
  return who.is_admin || (rec.owner_id !== undefined && rec.owner_id === who.id);
}

/** `what` names the resource for the caller, e.g. "Tool 'search'". */
export function assertUse(rec: Owned, who: Principal, code: string, what: string): void {
  if (!mayUse(rec, who)) throw forbidden(code, `${what} is not owned by or shared with '${who.id}'`);
}

export function assertChange(rec: Owned, who: Principal, code: string, what: string): void {
  if (!mayChange(rec, who)) {
    throw forbidden(
      code,
      `Only the owner of ${lowerFirst(what)}${rec.owner_id === undefined ? ' (it has no recorded owner)' : ''} or an admin may change or delete it; '${who.id}' is neither`,
    );
  }
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/**
 * Resource kinds whose provider records carry no owner. `private` kinds are
 * read only by their owner and admins (like browser sessions); the others are
 * a shared catalog everyone authenticated may read, and only change is scoped.
 */
export const OWNED_KINDS = {
  code_session: { label: 'Code interpreter session', code: 'SB_ERR_CODE_SESSION_FORBIDDEN', private: true },
  credential_provider: { label: 'Credential provider', code: 'SB_ERR_IDENTITY_FORBIDDEN', private: false },
  workload_identity: { label: 'Workload identity', code: 'SB_ERR_IDENTITY_FORBIDDEN', private: false },
  tool: { label: 'Tool', code: 'SB_ERR_TOOLS_FORBIDDEN', private: false },
  evaluator: { label: 'Evaluator', code: 'SB_ERR_EVALUATIONS_FORBIDDEN', private: false },
  online_config: { label: 'Online evaluation config', code: 'SB_ERR_EVALUATIONS_FORBIDDEN', private: false },
  score: { label: 'Score', code: 'SB_ERR_EVALUATIONS_FORBIDDEN', private: false },
  memory_resource: { label: 'Memory resource', code: 'SB_ERR_MEMORY_RESOURCE_FORBIDDEN', private: false },
} as const;
export type OwnedKind = keyof typeof OWNED_KINDS;

interface OwnerEntry {
  owner_id: string;
  created_at: string;
}

/**
 * Owners of records whose providers keep none, in the core store (collection
 * `owners`), so every provider - noop, durable or a third-party package - gets
 * the same rule without carrying an owner field. Keyed by kind, provider
 * instance and id, since ids are only unique within one provider.
 */
export class OwnerLedger {
  private readonly col: Collection<OwnerEntry>;

  constructor(store: Store) {
    this.col = store.collection<OwnerEntry>('owners');
  }

  // JSON of the parts: unambiguous whatever an id holds, and plain text for SQLite and Redis keys.
  private key(kind: OwnedKind, provider: string, id: string): string {
    return JSON.stringify([kind, provider, id]);
  }

  async ownerOf(kind: OwnedKind, provider: string, id: string): Promise<string | undefined> {
    return (await this.col.get(this.key(kind, provider, id)))?.owner_id;
  }

  /**
   * Records the creator once the provider has made the record. If the owner
   * cannot be written, the record is undone through `undo` (a record nobody
   * owns would be the admins') and the store's 503 goes to the caller.
   */
  async record(
    kind: OwnedKind,
    provider: string,
    id: string,
    who: Principal,
    undo: () => Promise<unknown>,
  ): Promise<void> {
    try {
      await this.col.set(this.key(kind, provider, id), { owner_id: who.id, created_at: new Date().toISOString() });
    } catch (err) {
      await undo().catch(() => undefined);
      throw err;
    }
  }

  /** After a delete. A leftover entry is harmless (the next create of that id overwrites it), so a store fault here is not the caller's failure. */
  async forget(kind: OwnedKind, provider: string, id: string): Promise<void> {
    await this.col.delete(this.key(kind, provider, id)).catch(() => undefined);
  }

  /** Throws 403 unless the caller may read (private kinds) the record. */
  async assertRead(kind: OwnedKind, provider: string, id: string, who: Principal): Promise<void> {
    const k = OWNED_KINDS[kind];
    if (!k.private || who.is_admin) return;
    assertUse({ owner_id: await this.ownerOf(kind, provider, id) }, who, k.code, `${k.label} '${id}'`);
  }

  /** Throws 403 unless the caller may change or delete the record. */
  async assertChange(kind: OwnedKind, provider: string, id: string, who: Principal): Promise<void> {
    if (who.is_admin) return;
    const k = OWNED_KINDS[kind];
    assertChange({ owner_id: await this.ownerOf(kind, provider, id) }, who, k.code, `${k.label} '${id}'`);
  }

  /**
   * Throws 403 unless the caller may draw on what the record holds (the API key
   * or client secret of a credential provider, tokens for a workload): that is
   * the owner's to use, like changing it, even where the record itself is readable by all.
   */
  async assertOwnerUse(kind: OwnedKind, provider: string, id: string, who: Principal): Promise<void> {
    if (who.is_admin) return;
    const k = OWNED_KINDS[kind];
    const owner = await this.ownerOf(kind, provider, id);
    if (owner !== undefined && owner === who.id) return;
    throw forbidden(
      k.code,
      `Only the owner of ${lowerFirst(k.label)} '${id}'${owner === undefined ? ' (it has no recorded owner)' : ''} or an admin may use it; '${who.id}' is neither`,
    );
  }

  /** The records of a list the caller may read: all of them for catalog kinds and admins. */
  async visible<T>(
    kind: OwnedKind,
    provider: string,
    items: T[],
    idOf: (item: T) => string,
    who: Principal,
  ): Promise<T[]> {
    if (!OWNED_KINDS[kind].private || who.is_admin || items.length === 0) return items;
    const owners = await this.col.getMany(items.map((i) => this.key(kind, provider, idOf(i))));
    return items.filter((_, i) => owners[i]?.owner_id === who.id);
  }
}

const ledgers = new WeakMap<Store, OwnerLedger>();

/** The ledger on this app's core store, with the caller (the /api/v1 auth hook has set it). */
export function ownership(request: FastifyRequest): { ledger: OwnerLedger; who: Principal } {
  const store = request.server.sb.store;
  let ledger = ledgers.get(store);
  if (!ledger) ledgers.set(store, (ledger = new OwnerLedger(store)));
  return { ledger, who: request.principal! };
}
