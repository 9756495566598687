import { randomUUID } from 'node:crypto';
import type { Engine, Policy, PolicyCapabilities, PolicyProvider } from '../../core/primitives/policy.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { pageOf } from './paging.ts';

const CAPABILITIES: PolicyCapabilities = {
  engines: true,
  validates_policies: false,
  generations: false,
  enforcement: false,
};

/**
 * Engines and policies kept in memory, in creation order, so clients can
 * exercise the CRUD surface with no policy engine installed. Nothing is
 * parsed or enforced: enforcement is reported off and generation (a
 * managed-cloud feature) is declared unsupported.
 */
export const noopPolicy: ProviderFactory<PolicyProvider> = {
  type: 'noop',
  kind: 'policy',
  autoInstance: true,
  description: 'Keeps policy engines and policies in memory; enforces nothing',
  create: (name) => {
    const engines = new Map<string, Engine>();
    const policies = new Map<string, Map<string, Policy>>();
    const copy = <T>(v: T): T => structuredClone(v);
    return {
      name,
      type: 'noop',
      kind: 'policy',
      capabilities: CAPABILITIES,
      async enforcement() {
        return { engine_id: null, enabled: false };
      },
      async createEngine(req) {
        const engine: Engine = {
          engine_id: randomUUID(),
          name: req.name,
          description: req.description ?? '',
          config: req.config ?? {},
          created_at: new Date().toISOString(),
        };
        engines.set(engine.engine_id, engine);
        policies.set(engine.engine_id, new Map());
        return copy(engine);
      },
      async getEngine(id) {
        const e = engines.get(id);
        return e && copy(e);
      },
      async listEngines(page) {
        const { items, next_token } = pageOf(
          [...engines.values()],
          page.max_results,
          page.next_token,
          'SB_ERR_POLICY_BAD_TOKEN',
        );
        return { engines: items.map(copy), next_token };
      },
      async deleteEngine(id) {
        policies.delete(id);
        return engines.delete(id);
      },
      async createPolicy(engineId, req) {
        const bucket = policies.get(engineId);
        if (!bucket) return undefined;
        const now = new Date().toISOString();
        const policy: Policy = {
          policy_id: randomUUID(),
          engine_id: engineId,
          policy_body: req.policy_body,
          description: req.description ?? '',
          created_at: now,
          updated_at: now,
        };
        bucket.set(policy.policy_id, policy);
        return copy(policy);
      },
      async getPolicy(engineId, policyId) {
        const p = policies.get(engineId)?.get(policyId);
        return p && copy(p);
      },
      async listPolicies(engineId, page) {
        const bucket = policies.get(engineId);
        if (!bucket) return undefined;
        const { items, next_token } = pageOf(
          [...bucket.values()],
          page.max_results,
          page.next_token,
          'SB_ERR_POLICY_BAD_TOKEN',
        );
        return { policies: items.map(copy), next_token };
      },
      async updatePolicy(engineId, policyId, patch) {
        const current = policies.get(engineId)?.get(policyId);
        if (!current) return undefined;
        const next: Policy = {
          ...current,
          policy_body: patch.policy_body ?? current.policy_body,
          description: patch.description ?? current.description,
          updated_at: new Date().toISOString(),
        };
        policies.get(engineId)!.set(policyId, next);
        return copy(next);
      },
      async deletePolicy(engineId, policyId) {
        return policies.get(engineId)?.delete(policyId) ?? false;
      },
      healthcheck: async () => 'ok',
      close: async () => {
        engines.clear();
        policies.clear();
      },
    };
  },
};
