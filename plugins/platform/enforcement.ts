import fp from 'fastify-plugin';
import { forbidden } from '../../core/errors.ts';
import type { AuthorizationRequest, PolicyProvider } from '../../core/primitives/policy.ts';
import { actionOf, questionOf } from './policy-mapping.ts';

/** What the agent runtime asks before a tool runs inside a run (null: enforcement is off). */
export type ToolGate = (q: Omit<AuthorizationRequest, 'engine_id'>) => Promise<boolean>;

declare module 'fastify' {
  interface FastifyInstance {
    /** Set when policy enforcement is on; agent and team runs ask it before every tool call. */
    policyGate: ToolGate | null;
    /** Every /api/v1 route with the action enforcement names it by (GET /api/v1/policy/schema). */
    policyActions: Array<{ action: string; method: string; path: string }>;
  }
}

/**
 * Policy enforcement for /api/v1 (issue 23). Whether it is on is read once at
 * start from the default policy provider; when off, no hook is added at all,
 * so requests pay nothing. When on, every request is decided after
 * authentication and validation (preHandler), before the route calls its
 * provider, and anything but a permit is a 403.
 */
/** The enforcing decision function of a policy provider, or null when it does not enforce. */
export async function enforcementGate(
  provider: PolicyProvider | undefined,
): Promise<{ engineId: string; gate: ToolGate } | null> {
  if (!provider?.capabilities.enforcement || !provider.authorize) return null;
  const status = await provider.enforcement();
  if (!status.enabled || !status.engine_id) return null;
  const authorize = provider.authorize.bind(provider);
  const engineId = status.engine_id;
  return { engineId, gate: async (q) => (await authorize({ ...q, engine_id: engineId })).decision === 'allow' };
}

export default fp(
  async (app) => {
    // Collected as routes are added, so the published list is the routes that exist, not a hand-kept copy.
    const actions: Array<{ action: string; method: string; path: string }> = [];
    app.decorate('policyActions', actions);
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        if (method === 'HEAD' || method === 'OPTIONS') continue;
        actions.push({ action: actionOf(method, route.url).action, method, path: route.url });
      }
    });
    const provider = app.sb.providers.get<PolicyProvider>('policy');
    const on = await enforcementGate(provider);
    app.decorate('policyGate', on?.gate ?? null);
    if (!on || !provider?.authorize) return;
    const authorize = provider.authorize.bind(provider);
    const engineId = on.engineId;
    app.log.info(
      { policy: provider.name, engine_id: engineId },
      'policy enforcement is on: /api/v1 requests need a Cedar permit',
    );
    app.addHook('preHandler', async (request) => {
      const { actionName, ...q } = questionOf(request, engineId);
      const d = await authorize(q);
      if (d.decision !== 'allow') {
        request.log.info(
          { action: actionName, resource: q.resource, principal: q.principal, reasons: d.reasons },
          'request denied by policy',
        );
        throw forbidden('SB_ERR_POLICY_DENIED', `Forbidden by policy: ${actionName} on ${q.resource}`);
      }
    });
  },
  { name: 'switchboard-platform-enforcement', dependencies: ['switchboard-platform-auth'] },
);
