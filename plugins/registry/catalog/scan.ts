import type { AgentRecord, ServerRecord, SkillRecord } from './records.ts';

/** Outcome of a registration-time security scan (spec 3): blocked items are stored disabled and tagged. */
export interface ScanVerdict {
  blocked: boolean;
  /** Add the `security-pending` tag when blocked (agents and skills follow *_ADD_PENDING_TAG); default true. */
  tag?: boolean;
  summary?: Record<string, unknown>;
}

/**
 * The seam for the scanning issue: the catalog calls these at registration.
 * Until a scanner is plugged in (app.catalog.scanner = ...), everything passes.
 */
export interface ScanHook {
  server(record: ServerRecord): Promise<ScanVerdict>;
  agent(record: AgentRecord): Promise<ScanVerdict>;
  skill(record: SkillRecord): Promise<ScanVerdict>;
}

export const SECURITY_PENDING = 'security-pending';

export const passingScan: ScanHook = {
  server: async () => ({ blocked: false }),
  agent: async () => ({ blocked: false }),
  skill: async () => ({ blocked: false }),
};

/** Disabled and tagged, as the state table says for a blocking finding. */
export function applyVerdict<T extends { is_enabled: boolean; tags: string[] }>(record: T, verdict: ScanVerdict): T {
  if (!verdict.blocked) return record;
  const tag = verdict.tag !== false && !record.tags.includes(SECURITY_PENDING);
  return heldUnhealthy({ ...record, is_enabled: false, tags: tag ? [...record.tags, SECURITY_PENDING] : record.tags });
}

/** Health shown for a server a scan blocked (spec 3: "shown as unhealthy"); the health checker replaces it once re-enabled. */
export const SECURITY_PENDING_HEALTH = 'unhealthy: security-pending';

/** Servers (records with a health status) that a scan blocks read unhealthy until a check after re-enabling. */
export function heldUnhealthy<T>(record: T): T {
  return record && typeof record === 'object' && 'health_status' in record
    ? { ...record, health_status: SECURITY_PENDING_HEALTH }
    : record;
}

/**
 * Enabling an item by hand is the review spec 3 asks for ("an administrator
 * re-enables an item after review"): the scan's `security-pending` mark goes,
 * or the item would stay out of discovery and routing while shown enabled.
 */
export function reviewed<T extends { is_enabled: boolean; tags: string[] }>(record: T): T {
  if (!record.is_enabled || !record.tags.includes(SECURITY_PENDING)) return record;
  return { ...record, tags: record.tags.filter((t) => t !== SECURITY_PENDING) };
}
