import type { Authenticator } from './identify.ts';
import type { Idp } from './idp.ts';
import type { LoginLockout } from './login-lockout.ts';
import type { UserContext } from './context.ts';
import type { ResourceType } from './self-tokens.ts';
import type { ScopeStore } from './scope-store.ts';
import type { AuthSettings } from './settings.ts';

/** What the auth plugin shares with the rest of the registry (catalog, gateway, health). */
export interface RegistryAuth {
  settings: AuthSettings;
  authenticator: Authenticator;
  scopes: ScopeStore;
  idp?: Idp;
  /** Failed-login counters shared by replicas (the login form and HTTP Basic). */
  lockout: LoginLockout;
  /**
   * Set by the catalog: may `user` see this registered resource? Undefined when
   * the catalog does not hold it. Token minting (spec 4.4 rule 7) asks it first,
   * so a bound token follows the catalog's own visibility rules (private skills,
   * server groups), and falls back to the scopes for resources not registered.
   */
  resourceVisible?: (user: UserContext, type: ResourceType, id: string) => boolean | undefined;
}
