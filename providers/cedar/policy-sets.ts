import { randomUUID } from 'node:crypto';
import { unavailable } from '../../core/errors.ts';
import type { AuthorizationDecision, AuthorizationRequest } from '../../core/primitives/policy.ts';
import { cedarValue, entityUid, loadCedar, splitPolicies, type CedarWasm } from './cedar-text.ts';
import type { PolicyRecords } from './records.ts';

/** How often a replica reads the version key: well inside the 1 s a change may take to reach it. */
export const POLL_MS = 200;

/**
 * Pre-parsed Cedar policy sets, one per engine, rebuilt when the store's
 * version key moves. Decisions then cost one wasm call on an already parsed
 * set: no store read and no parsing per request.
 */
export class PolicySets {
  private readonly prefix = randomUUID();
  private readonly built = new Map<string, { version: string; psetId: string }>();
  private readonly building = new Map<string, Promise<string>>();
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

  private async psetFor(cedar: CedarWasm, engineId: string): Promise<string> {
    const version = await this.follow();
    const have = this.built.get(engineId);
    if (have && have.version === version) return have.psetId;
    const key = `${engineId}@${version}`;
    let p = this.building.get(key);
    if (!p) {
      p = this.rebuild(cedar, engineId, version).finally(() => this.building.delete(key));
      this.building.set(key, p);
    }
    return p;
  }

  private async rebuild(cedar: CedarWasm, engineId: string, version: string): Promise<string> {
    const statics: Record<string, string> = {};
    const engine = await this.records.engines.get(engineId);
    if (engine) {
      for (const pol of await this.records.all(this.records.policies(engineId))) {
        splitPolicies(cedar, pol.policy_body).forEach((text, i) => (statics[i === 0 ? pol.policy_id : `${pol.policy_id}#${i}`] = text));
      }
    }
    const psetId = `${this.prefix}/${engineId}`;
    const ok = cedar.preparsePolicySet(psetId, { staticPolicies: statics });
    if (ok.type === 'failure') throw unavailable('SB_ERR_POLICY_ENGINE_BROKEN', `Stored policies of engine '${engineId}' no longer parse: ${ok.errors.map((e) => e.message).join('; ')}`);
    this.built.set(engineId, { version, psetId });
    return psetId;
  }

  async decide(engineId: string, req: AuthorizationRequest): Promise<AuthorizationDecision> {
    const cedar = await loadCedar();
    const psetId = await this.psetFor(cedar, engineId);
    const principal = entityUid(req.principal);
    const context = (cedarValue(req.context ?? {}) ?? {}) as Record<string, never>;
    const answer = cedar.statefulIsAuthorized({
      principal,
      action: entityUid(req.action),
      resource: entityUid(req.resource),
      context,
      preparsedPolicySetId: psetId,
      entities: [
        {
          uid: principal,
          attrs: (cedarValue(req.principal_attrs ?? {}) ?? {}) as Record<string, never>,
          parents: (req.principal_parents ?? []).map(entityUid),
        },
      ],
    });
    // An engine error is not a permit: deny and say why in the reasons.
    if (answer.type === 'failure') return { decision: 'deny', reasons: answer.errors.map((e) => `error: ${e.message}`) };
    return { decision: answer.response.decision, reasons: answer.response.diagnostics.reason };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
