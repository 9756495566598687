import type { FastifyRequest } from 'fastify';
import { forbidden, notFound } from '../../../core/errors.ts';
import type { Engine, PolicyProvider } from '../../../core/primitives/policy.ts';

export const policyFor = (request: FastifyRequest) =>
  request.server.sb.providers.resolve<PolicyProvider>('policy', request.headers);

/** Spec 4.6 / 5.4: create, update and delete are for admins only. */
export function requireAdmin(request: FastifyRequest, what: string): void {
  const p = request.principal;
  if (!p?.is_admin)
    throw forbidden(
      'SB_ERR_POLICY_ADMIN_REQUIRED',
      `Only admins may ${what}; '${p?.id ?? 'anonymous'}' is not an admin`,
    );
}

export async function engineOr404(provider: PolicyProvider, engineId: string): Promise<Engine> {
  const engine = await provider.getEngine(engineId);
  if (!engine) throw notFound('SB_ERR_POLICY_ENGINE_NOT_FOUND', `Policy engine '${engineId}' not found`);
  return engine;
}
