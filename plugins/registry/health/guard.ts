import { refusedClass } from '../../../core/address-guard.ts';

/**
 * SSRF guard on backend URLs at use time (health probes and the gateway):
 * link-local and cloud-metadata addresses are refused unless
 * `registry.allow_link_local_backends` is true. Judged per use, not only at
 * registration, because a name can be re-pointed after it was registered.
 */
export class BackendGuard {
  // Resolving a name on every proxied request would add a DNS round trip; a short cache bounds that.
  private readonly cache = new Map<string, { cls: string | undefined; at: number }>();

  constructor(
    private readonly allowLinkLocal: boolean,
    private readonly ttlMs = 30_000,
  ) {}

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
        cls = await refusedClass(url, ['metadata', 'link-local']);
        if (this.cache.size > 10_000) this.cache.clear();
        this.cache.set(key, { cls, at: Date.now() });
      }
      if (cls) return cls;
    }
    return undefined;
  }
}

/** `registry.allow_link_local_backends` (default false). */
export function allowLinkLocalBackends(registrySection: Record<string, unknown> | undefined): boolean {
  const v = registrySection?.allow_link_local_backends;
  if (v !== undefined && typeof v !== 'boolean') throw new Error('registry.allow_link_local_backends must be true or false');
  return v === true;
}
