import { Type, type Static } from '@sinclair/typebox';
import { validateSection } from '../../../core/config.ts';

/** `registry.health` keys. Intervals in seconds; 0 turns the periodic sweep off. */
export const HealthConfigSchema = Type.Object(
  {
    interval_seconds: Type.Number({ minimum: 0, default: 300 }),
    timeout_seconds: Type.Number({ minimum: 0.05, default: 10 }),
    concurrency: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
    /** Fraction of the interval over which a periodic sweep spreads its checks (0 = all at once, bounded by concurrency). */
    sweep_spread: Type.Number({ minimum: 0, maximum: 0.9, default: 0.5 }),
    max_ws_connections: Type.Integer({ minimum: 1, default: 200 }),
    ws_ping_seconds: Type.Number({ minimum: 0.05, default: 20 }),
    gateway_timeout_seconds: Type.Number({ minimum: 0.05, default: 30 }),
    /**
     * Delays before re-checking a server whose first check failed (just registered or re-enabled, often still
     * starting), one retry per entry, before it waits for the sweep; [] turns the retries off.
     */
    first_check_retry_seconds: Type.Array(Type.Number({ minimum: 0.05 }), { maxItems: 10, default: [2, 10, 30] }),
  },
  { additionalProperties: false },
);
export type HealthConfig = Static<typeof HealthConfigSchema>;

export function healthConfig(registrySection: Record<string, unknown> | undefined): HealthConfig {
  return validateSection(HealthConfigSchema, registrySection?.health ?? {}, 'registry.health');
}
