import { randomUUID } from 'node:crypto';
import type { ProviderBase } from '../../../../core/provider.ts';

export interface AgentTrace {
  trace_id: string;
  name: string;
  user_id: string;
  session_id: string;
  input: string;
  output: string;
  tags: string[];
  spans: Array<Record<string, unknown>>;
  metadata: Record<string, unknown>;
}

/** Method names an observability provider may expose for trace ingestion, in preference order. */
const TRACE_METHODS = ['ingestTrace', 'createTrace', 'trace'] as const;

/**
 * `auto_trace`: hand the run's trace to the observability provider when it has a
 * trace-ingest method. Without one (or without the primitive) nothing is sent
 * and no trace id is reported: the response never names a trace that does not exist.
 */
export async function sendTrace(provider: ProviderBase | undefined, trace: Omit<AgentTrace, 'trace_id'>): Promise<string | undefined> {
  if (!provider) return undefined;
  const p = provider as unknown as Record<string, unknown>;
  const method = TRACE_METHODS.find((m) => typeof p[m] === 'function');
  if (!method) return undefined;
  const full: AgentTrace = { trace_id: randomUUID(), ...trace };
  const out = (await (p[method] as (t: AgentTrace) => Promise<unknown>).call(provider, full)) as { trace_id?: unknown } | undefined;
  return typeof out?.trace_id === 'string' ? out.trace_id : full.trace_id;
}
