import type { Settings } from '../core/config.ts';
import type { DiscoveredPackage } from '../core/discovery.ts';
import type { ProviderSet } from '../core/providers.ts';
import type { Store } from '../core/store.ts';
import type { LateServices } from '../core/registry-link.ts';
import type { StoreSeeds } from '../core/store-seeds.ts';
import type { Principal } from '../core/primitives/auth.ts';
import type { HostLookup } from '../core/address-guard.ts';

/** What every plugin can reach through `app.sb`. */
export interface SwitchboardContext {
  settings: Settings;
  store: Store;
  /** What is written into the store at start, written again when the store comes back empty. */
  seeds: StoreSeeds;
  providers: ProviderSet;
  packages: DiscoveredPackage[];
  /** Services surface plugins offer providers (the registry link), bound as the plugins register. */
  services: LateServices;
  startedAt: number;
  /** How outbound guards resolve names (core/address-guard.ts); tests simulate DNS with it. The system resolver when unset. */
  hostLookup?: HostLookup;
}

declare module 'fastify' {
  interface FastifyInstance {
    sb: SwitchboardContext;
  }
  interface FastifyRequest {
    /** Set by the platform auth plugin on /api/v1 requests. */
    principal?: Principal;
    /** performance.now() when the request arrived (plugins/request-context.ts). */
    sbStartedAt: number;
  }
}
