import { randomUUID } from 'node:crypto';
import { unavailable } from '../../core/errors.ts';
import type { AuthorizationDecision, AuthorizationRequest } from '../../core/primitives/policy.ts';
import { cedarValue, entityUid, loadCedar, splitPolicies, type CedarWasm } from './cedar-text.ts';
import type { PolicyRecords } from './records.ts';

/** An engine's policies as pre-parsed sets, one per action they name, so a decision evaluates only the policies that can apply. */
interface Built {
  version: string;
  byAction: Map<string, string>;
  /** Policies with an unconstrained action: the set for every action no policy names. */
  anyAction: string;
}

const MEMO_MAX = 10_000;

/** The action ids a policy's scope admits, or null when it admits every action. */
function actionsOf(cedar: CedarWasm, text: string): string[] | null {
  const j = cedar.policyToJson(text);
  if (j.type === 'failure') return null;
  const a = j.json.action as { op: string; entity?: unknown; entities?: unknown[] };
  const id = (e: unknown) => {
    const u = ((e as { __entity?: unknown }).__entity ?? e) as { type: string; id: string };
    return `${u.type}::${JSON.stringify(u.id)}`;
  };
  if (a.op === '==' && a.entity) return [id(a.entity)];
  if (a.op === 'in') return a.entities ? a.entities.map(id) : a.entity ? [id(a.entity)] : null;
  return null;
}

/** How often a replica reads the version key: well inside the 1 s a change may take to reach it. */
export const POLL_MS = 200;

/**
 * Pre-parsed Cedar policy sets, one per engine, rebuilt when the store's
 * version key moves. Decisions then cost one wasm call on an already parsed
 * set: no store read and no parsing per request.
 */
export class PolicySets {
  private readonly prefix = randomUUID();
  private readonly built = new Map<string, Built>();
  private readonly building = new Map<string, Promise<Built>>();
  /** Decisions are a pure function of the policy version and the question: repeated questions skip the engine. */
  private readonly memo = new Map<string, AuthorizationDecision>();
  private memoVersion = '';
  private current: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly records: PolicyRecords) {}

  /** Start following the version key (first decision), so idle instances poll nothing. */
  private async follow(): Promise<string> {
    if (this.current === undefined) {
      this.current = await this.records.version();
      this.timer = setInterval(() => {
        this.records.version().then(
          (v) => (this.current = v),
          () => undefined, // a store outage surfaces on the next write or rebuild as a 503
        );
      }, POLL_MS);
      this.timer.unref();
    }
    return this.current;
  }

  /** A local write: this replica sees its own change at once. */
  changed(version: string): void {
    if (this.current !== undefined) this.current = version;
  }

  private async builtFor(cedar: CedarWasm, engineId: string): Promise<Built> {
    const version = await this.follow();
    const have = this.built.get(engineId);
    if (have && have.version === version) return have;
    const key = `${engineId}@${version}`;
    let p = this.building.get(key);
    if (!p) {
      p = this.rebuild(cedar, engineId, version).finally(() => this.building.delete(key));
      this.building.set(key, p);
    }
    return p;
  }

  private async rebuild(cedar: CedarWasm, engineId: string, version: string): Promise<Built> {
    const any: Record<string, string> = {};
    const named = new Map<string, Record<string, string>>();
    const engine = await this.records.engines.get(engineId);
    if (engine) {
      for (const pol of await this.records.all(this.records.policies(engineId))) {
        splitPolicies(cedar, pol.policy_body).forEach((text, i) => {
          const id = i === 0 ? pol.policy_id : `${pol.policy_id}#${i}`;
          const actions = actionsOf(cedar, text);
          if (!actions) any[id] = text;
          else for (const a of actions) named.set(a, { ...named.get(a), [id]: text });
        });
      }
    }
    const prepare = (suffix: string, statics: Record<string, string>) => {
      const psetId = `${this.prefix}/${engineId}/${suffix}`;
      const ok = cedar.preparsePolicySet(psetId, { staticPolicies: statics });
      if (ok.type === 'failure')
        throw unavailable(
          'SB_ERR_POLICY_ENGINE_BROKEN',
          `Stored policies of engine '${engineId}' no longer parse: ${ok.errors.map((e) => e.message).join('; ')}`,
        );
      return psetId;
    };
    const built: Built = { version, byAction: new Map(), anyAction: prepare('*', any) };
    for (const [action, statics] of named) built.byAction.set(action, prepare(action, { ...any, ...statics }));
    this.built.set(engineId, built);
    return built;
  }

  async decide(engineId: string, req: AuthorizationRequest): Promise<AuthorizationDecision> {
    const cedar = await loadCedar();
    const built = await this.builtFor(cedar, engineId);
    if (this.memoVersion !== built.version) {
      this.memo.clear();
      this.memoVersion = built.version;
    }
    const memoKey = JSON.stringify([
      engineId,
      req.principal,
      req.principal_parents,
      req.principal_attrs,
      req.action,
      req.resource,
      req.context,
    ]);
    const known = this.memo.get(memoKey);
    if (known) return known;
    const principal = entityUid(req.principal);
    const action = entityUid(req.action);
    const context = (cedarValue(req.context ?? {}) ?? {}) as Record<string, never>;
    const answer = cedar.statefulIsAuthorized({
      principal,
      action,
      resource: entityUid(req.resource),
      context,
      preparsedPolicySetId: built.byAction.get(`${action.type}::${JSON.stringify(action.id)}`) ?? built.anyAction,
      entities: [
        {
          uid: principal,
          attrs: (cedarValue(req.principal_attrs ?? {}) ?? {}) as Record<string, never>,
          parents: (req.principal_parents ?? []).map(entityUid),
        },
      ],
    });
    // An engine error is not a permit: deny and say why in the reasons.
    const decision: AuthorizationDecision =
      answer.type === 'failure'
        ? { decision: 'deny', reasons: answer.errors.map((e) => `error: ${e.message}`) }
        : { decision: answer.response.decision, reasons: answer.response.diagnostics.reason };
    if (this.memo.size >= MEMO_MAX) this.memo.clear();
    this.memo.set(memoKey, decision);
    return decision;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
