import type { ObservabilityProvider, TraceInput } from '../../../../core/primitives/observability.ts';
import type { ProviderBase } from '../../../../core/provider.ts';

/**
 * `auto_trace`: hand the run's trace to the observability provider when it can
 * ingest traces. Without one nothing is sent and no trace id is reported: the
 * response never names a trace that was not stored.
 */
export async function sendTrace(
  provider: ProviderBase | undefined,
  trace: Partial<TraceInput> & { name: string },
): Promise<string | undefined> {
  const obs = provider as ObservabilityProvider | undefined;
  if (obs?.capabilities.ingest !== true || typeof obs.ingestTrace !== 'function') return undefined;
  const accepted = await obs.ingestTrace(trace);
  return typeof accepted?.trace_id === 'string' ? accepted.trace_id : undefined;
}
