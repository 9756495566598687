import type { Dispatcher } from 'undici';
import {
  pinnedAgent,
  refusedClass,
  systemLookup,
  type AddressClass,
  type AddressPolicy,
  type HostLookup,
} from '../../../core/address-guard.ts';

/**
 * SSRF guard on backend URLs (registration, health probes and the gateway):
 * link-local and cloud-metadata addresses are refused unless
 * `registry.allow_link_local_backends` is true. Judged at registration, per
 * use, and again at connect time by `dispatcher` (which connects only to the
 * address it judged), because a name can be re-pointed after any earlier check.
 */
export class BackendGuard {
  readonly policy: AddressPolicy;
  /** Every backend connection of health probes goes through this; the gateway builds its pools on `policy`. */
  readonly dispatcher: Dispatcher;
  // Resolving a name on every proxied request would add a DNS round trip; a short cache bounds that.
  // (The connect-time check is not cached: it runs once per new connection.)
  private readonly cache = new Map<string, { cls: string | undefined; at: number }>();

  constructor(
    private readonly allowLinkLocal: boolean,
    lookup: HostLookup = systemLookup,
    private readonly ttlMs = 30_000,
  ) {
    const refused: AddressClass[] = allowLinkLocal ? [] : ['metadata', 'link-local'];
    this.policy = { refused, lookup };
    this.dispatcher = pinnedAgent(this.policy);
  }

  /** The refused address class one of `urls` reaches, or undefined when all are allowed. */
  async blocked(...urls: Array<string | undefined>): Promise<string | undefined> {
    if (this.allowLinkLocal) return undefined;
    for (const raw of urls) {
      if (!raw) continue;
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        continue;
      }
      const key = url.hostname;
      const hit = this.cache.get(key);
      let cls: string | undefined;
      if (hit && Date.now() - hit.at < this.ttlMs) cls = hit.cls;
      else {
        cls = await refusedClass(url, this.policy.refused, this.policy.lookup);
        if (this.cache.size > 10_000) this.cache.clear();
        this.cache.set(key, { cls, at: Date.now() });
      }
      if (cls) return cls;
    }
    return undefined;
  }

  /** At app close: destroyed rather than closed, so a probe still in flight cannot hold the close up. */
  async close(): Promise<void> {
    await this.dispatcher.destroy();
  }
}

/** `registry.allow_link_local_backends` (default false). */
export function allowLinkLocalBackends(registrySection: Record<string, unknown> | undefined): boolean {
  const v = registrySection?.allow_link_local_backends;
  if (v !== undefined && typeof v !== 'boolean')
    throw new Error('registry.allow_link_local_backends must be true or false');
  return v === true;
}
