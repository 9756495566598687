import type { FastifyRequest } from 'fastify';
import { forbidden, notFound } from '../../../core/errors.ts';
import type { ObservabilityProvider, Trace } from '../../../core/primitives/observability.ts';
import { requireMethod } from '../capability.ts';

/**
 * Traces hold users' conversations, so reads are scoped like browser sessions:
 * admins see everything, everyone else the traces recorded under their own id
 * (`user_id`) and what hangs off them (sessions, logs, generations, scores).
 * Ingest is not scoped: services record traces on behalf of their users.
 */
export function visibleUser(request: FastifyRequest, requested: string | undefined): string | undefined {
  const who = request.principal!;
  if (who.is_admin) return requested;
  if (requested !== undefined && requested !== who.id) {
    throw forbidden(
      'SB_ERR_OBSERVABILITY_FORBIDDEN',
      `Only admins read other users' traces; '${who.id}' asked for user_id '${requested}'`,
    );
  }
  return who.id;
}

export function assertOwnTrace(request: FastifyRequest, trace: Pick<Trace, 'trace_id' | 'user_id'>): void {
  const who = request.principal!;
  if (!who.is_admin && trace.user_id !== who.id)
    throw forbidden('SB_ERR_OBSERVABILITY_FORBIDDEN', `Trace '${trace.trace_id}' belongs to another user`);
}

/** Logs, generations and scores carry no user: a non-admin lists them per trace, for a trace of their own. */
export async function assertTraceFilter(
  request: FastifyRequest,
  provider: ObservabilityProvider,
  traceId: string | undefined,
  what: string,
): Promise<void> {
  const who = request.principal!;
  if (who.is_admin) return;
  if (traceId === undefined) {
    throw forbidden(
      'SB_ERR_OBSERVABILITY_FORBIDDEN',
      `Only admins list ${what} across traces; pass trace_id of one of your traces`,
    );
  }
  const trace = await requireMethod(provider, 'getTrace', 'reading traces')(traceId);
  if (!trace) throw notFound('SB_ERR_OBSERVABILITY_TRACE_NOT_FOUND', `Trace '${traceId}' not found`);
  assertOwnTrace(request, trace);
}
