import type { Collection, Store } from '../../../core/store-types.ts';

/** One recorded health result of a server. */
export interface HealthSample {
  status: string;
  checked_at: string;
  /** How long the probe took, when the server was probed (not for disabled or refused servers). */
  latency_ms?: number;
  /** Why it is unhealthy: the part of the status after `unhealthy: `. */
  detail?: string;
}

/** Kept per server: enough for a detail page's recent past, small enough to read in one get. */
export const HISTORY_LIMIT = 50;
/** An unchanged status is sampled at most this often, so a sweep of a steady catalog mostly writes nothing. */
export const SAMPLE_EVERY_MS = 60_000;

interface Stored {
  /** Newest first. */
  samples: HealthSample[];
}

/**
 * The last HISTORY_LIMIT health results of each server, in the core store so
 * every replica reads the same history (issue 20). A result is written when
 * the status changed since the newest sample, or when that sample is older
 * than SAMPLE_EVERY_MS; anything else costs no store access at all, thanks to
 * the newest sample this process wrote or read (`newest`).
 */
export class HealthHistory {
  private readonly col: Collection<Stored>;
  private readonly newest = new Map<string, { status: string; at: number }>();

  constructor(
    store: Store,
    private readonly limit = HISTORY_LIMIT,
    private readonly everyMs = SAMPLE_EVERY_MS,
  ) {
    this.col = store.collection<Stored>('registry_health_history');
  }

  private due(known: { status: string; at: number } | undefined, status: string, at: number): boolean {
    return !known || known.status !== status || at - known.at >= this.everyMs;
  }

  /** Record one result; true when it was written. */
  async record(path: string, status: string, checkedAt: string, latencyMs?: number): Promise<boolean> {
    const at = Date.parse(checkedAt);
    if (Number.isNaN(at) || !this.due(this.newest.get(path), status, at)) return false;
    // Another replica may have written since: judge against the stored newest sample too.
    const samples = (await this.col.get(path))?.samples ?? [];
    const top = samples[0];
    const stored = top ? { status: top.status, at: Date.parse(top.checked_at) } : undefined;
    if (!this.due(stored, status, at)) {
      this.newest.set(path, stored!);
      return false;
    }
    const sample: HealthSample = { status, checked_at: new Date(at).toISOString() };
    if (latencyMs !== undefined) sample.latency_ms = Math.round(latencyMs);
    if (status.startsWith('unhealthy: ')) sample.detail = status.slice('unhealthy: '.length);
    await this.col.set(path, { samples: [sample, ...samples].slice(0, this.limit) });
    this.newest.set(path, { status, at });
    return true;
  }

  /** Newest first; empty for a server never checked (or unknown). */
  async list(path: string): Promise<HealthSample[]> {
    return (await this.col.get(path))?.samples ?? [];
  }

  /** A removed server takes its history with it (a new server at the path starts afresh). */
  async forget(path: string): Promise<void> {
    this.newest.delete(path);
    await this.col.delete(path);
  }
}
