import { badRequest } from '../../core/errors.ts';
import type {
  Engine,
  EnforcementStatus,
  Policy,
  PolicyCapabilities,
  PolicyProvider,
} from '../../core/primitives/policy.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { pageOf } from '../noop/paging.ts';
import { checkPolicyBody, loadCedar } from './cedar-text.ts';
import { PolicySets } from './policy-sets.ts';
import { PolicyRecords } from './records.ts';

const CAPABILITIES: PolicyCapabilities = {
  engines: true,
  validates_policies: true,
  generations: false,
  enforcement: true,
};

interface CedarOptions {
  enforce: boolean;
  /** The enforcing engine, by id or name. */
  engine: string | undefined;
  /** Policies written into the enforcing engine when it is first created (the way in for the first admin). */
  bootstrap: string[];
  schema: string | undefined;
}

function parseOptions(raw: Record<string, unknown>): CedarOptions {
  const bad = (what: string) => badRequest('SB_ERR_CONFIG_INVALID', `providers.policy cedar option ${what}`);
  if (raw.enforce !== undefined && typeof raw.enforce !== 'boolean') throw bad("'enforce' must be true or false");
  if (raw.engine !== undefined && (typeof raw.engine !== 'string' || !raw.engine))
    throw bad("'engine' must be an engine id or name");
  if (raw.enforce === true && raw.engine === undefined)
    throw bad("'engine' is required when 'enforce' is true: name the engine whose policies decide");
  const boot = raw.bootstrap_policies ?? [];
  if (!Array.isArray(boot) || boot.some((b) => typeof b !== 'string'))
    throw bad("'bootstrap_policies' must be a list of Cedar policy texts");
  if (raw.schema !== undefined && typeof raw.schema !== 'string') throw bad("'schema' must be Cedar schema text");
  return {
    enforce: raw.enforce === true,
    engine: raw.engine as string | undefined,
    bootstrap: boot as string[],
    schema: raw.schema as string | undefined,
  };
}

/**
 * Policy engines whose policies are Cedar, decided by the official engine.
 * Engines and policies live in the core store; every write bumps a version
 * key that all replicas follow (policy-sets.ts).
 */
export const cedarPolicy: ProviderFactory<PolicyProvider> = {
  type: 'cedar',
  kind: 'policy',
  description: 'Cedar policies on the core store (options: enforce, engine, bootstrap_policies, schema)',
  create: async (name, raw, ctx) => {
    const o = parseOptions(raw);
    const cedar = await loadCedar();
    if (o.schema !== undefined) {
      const s = cedar.checkParseSchema(o.schema);
      if (s.type === 'failure')
        throw badRequest(
          'SB_ERR_CONFIG_INVALID',
          `providers.policy cedar option 'schema' is not a Cedar schema: ${s.errors.map((e) => e.message).join('; ')}`,
        );
    }
    const records = new PolicyRecords(ctx.store, name);
    const sets = new PolicySets(records);
    const changed = async () => sets.changed(await records.bump());
    for (const b of o.bootstrap) checkPolicyBody(cedar, b, o.schema);

    const createEngine = async (req: {
      name: string;
      description?: string;
      config?: Record<string, unknown>;
    }): Promise<Engine> => {
      const engine: Engine = {
        engine_id: records.newId(),
        name: req.name,
        description: req.description ?? '',
        config: req.config ?? {},
        created_at: new Date().toISOString(),
      };
      await records.engines.set(engine.engine_id, engine);
      await changed();
      return engine;
    };
    const findEngine = async (idOrName: string): Promise<Engine | undefined> =>
      (await records.engines.get(idOrName)) ?? (await records.all(records.engines)).find((e) => e.name === idOrName);
    const writePolicy = async (engineId: string, body: string, description: string): Promise<Policy> => {
      const now = new Date().toISOString();
      const policy: Policy = {
        policy_id: records.newId(),
        engine_id: engineId,
        policy_body: body,
        description,
        created_at: now,
        updated_at: now,
      };
      await records.policies(engineId).set(policy.policy_id, policy);
      return policy;
    };

    // The enforcing engine's id, found (or made once, across replicas, with its bootstrap policies) on first use.
    let enforcing: Promise<string> | undefined;
    const enforcingEngine = (): Promise<string> =>
      (enforcing ??= (async () => {
        const found = await findEngine(o.engine!);
        if (found) return found.engine_id;
        if (await records.claims.setIfAbsent(`bootstrap:${o.engine}`, { by: name })) {
          const e = await createEngine({ name: o.engine!, description: 'enforcing engine, created at first use' });
          for (const b of o.bootstrap) await writePolicy(e.engine_id, b, 'bootstrap policy from the provider options');
          await changed();
          return e.engine_id;
        }
        // Another replica is creating it: wait for it to appear.
        for (let i = 0; i < 50; i++) {
          await new Promise((r) => setTimeout(r, 100));
          const e = await findEngine(o.engine!);
          if (e) return e.engine_id;
        }
        throw badRequest(
          'SB_ERR_POLICY_ENGINE_NOT_FOUND',
          `The enforcing engine '${o.engine}' was claimed by another replica but never appeared`,
        );
      })().catch((err) => {
        enforcing = undefined;
        throw err;
      }));

    const provider: PolicyProvider = {
      name,
      type: 'cedar',
      kind: 'policy',
      capabilities: CAPABILITIES,
      async enforcement(): Promise<EnforcementStatus> {
        if (!o.enforce) return { engine_id: null, enabled: false };
        return { engine_id: await enforcingEngine(), enabled: true };
      },
      createEngine,
      getEngine: (id) => records.engines.get(id),
      async listEngines(page) {
        const { items, next_token } = pageOf(
          await records.all(records.engines),
          page.max_results,
          page.next_token,
          'SB_ERR_POLICY_BAD_TOKEN',
        );
        return { engines: items, next_token };
      },
      async deleteEngine(id) {
        if (!(await records.engines.get(id))) return false;
        await records.policies(id).clear();
        await records.engines.delete(id);
        await changed();
        return true;
      },
      async createPolicy(engineId, req) {
        checkPolicyBody(cedar, req.policy_body, o.schema);
        if (!(await records.engines.get(engineId))) return undefined;
        const policy = await writePolicy(engineId, req.policy_body, req.description ?? '');
        await changed();
        return policy;
      },
      getPolicy: (engineId, policyId) => records.policies(engineId).get(policyId),
      async listPolicies(engineId, page) {
        if (!(await records.engines.get(engineId))) return undefined;
        const { items, next_token } = pageOf(
          await records.all(records.policies(engineId)),
          page.max_results,
          page.next_token,
          'SB_ERR_POLICY_BAD_TOKEN',
        );
        return { policies: items, next_token };
      },
      async updatePolicy(engineId, policyId, patch) {
        if (patch.policy_body !== undefined) checkPolicyBody(cedar, patch.policy_body, o.schema);
        const current = await records.policies(engineId).get(policyId);
        if (!current) return undefined;
        const next: Policy = {
          ...current,
          policy_body: patch.policy_body ?? current.policy_body,
          description: patch.description ?? current.description,
          updated_at: new Date().toISOString(),
        };
        await records.policies(engineId).set(policyId, next);
        await changed();
        return next;
      },
      async deletePolicy(engineId, policyId) {
        const gone = await records.policies(engineId).delete(policyId);
        if (gone) await changed();
        return gone;
      },
      async authorize(req) {
        const engineId = req.engine_id ?? (o.enforce ? await enforcingEngine() : undefined);
        // No engine to ask is a deny, never an allow.
        if (!engineId)
          return { decision: 'deny', reasons: ['no engine: pass engine_id or configure enforce with an engine'] };
        return sets.decide(engineId, req);
      },
      healthcheck: async () => {
        await records.version();
        return 'ok';
      },
      close: async () => sets.close(),
    };
    return provider;
  },
};

export const providers = [cedarPolicy];
export default { providers };
