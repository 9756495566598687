import type { AuthBackend, Principal } from '../../core/primitives/auth.ts';
import type { ProviderFactory } from '../../core/provider.ts';

const NOOP_PRINCIPAL: Principal = { id: 'noop', type: 'user', is_admin: true, groups: [], scopes: [] };

/** Authentication off: every caller is the admin `noop` (local development only). */
export const noopAuth: ProviderFactory<AuthBackend> = {
  type: 'noop',
  kind: 'auth',
  autoInstance: true,
  description: 'Every caller is the admin principal `noop`',
  create: (name) => ({
    name,
    type: 'noop',
    kind: 'auth',
    capabilities: {},
    authenticate: () => ({ ...NOOP_PRINCIPAL, groups: [], scopes: [] }),
    publicConfig: () => ({ enabled: false }),
    healthcheck: async () => 'ok',
    close: async () => {},
  }),
};
