import type {
  CredentialProvider,
  IdentityCapabilities,
  IdentityProvider,
  WorkloadIdentity,
} from '../../core/primitives/identity.ts';
import { redactSecrets } from '../../core/primitives/identity.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { unsupported } from './unsupported.ts';

/** Records only: issuing tokens or API keys needs a real identity service. */
const CAPABILITIES: IdentityCapabilities = {
  tokens: false,
  api_keys: false,
  workload_tokens: false,
  credential_providers: true,
  workload_identities: true,
};

/**
 * Credential providers and workload identities kept in memory. Secret config
 * values are kept (a real provider would hand them to its vault) but never
 * returned.
 */
export const noopIdentity: ProviderFactory<IdentityProvider> = {
  type: 'noop',
  kind: 'identity',
  autoInstance: true,
  description: 'Keeps credential providers and workload identities in memory; issues no tokens',
  create: (name) => {
    const providers = new Map<string, CredentialProvider>();
    const workloads = new Map<string, WorkloadIdentity>();
    const no = (what: string): never => unsupported('identity', name, what);
    const showProvider = (p: CredentialProvider): CredentialProvider => ({ ...p, config: redactSecrets(p.config) });
    const now = () => new Date().toISOString();
    return {
      name,
      type: 'noop',
      kind: 'identity',
      capabilities: CAPABILITIES,
      getToken: async () => no('token issuance'),
      getApiKey: async () => no('API key retrieval'),
      getWorkloadToken: async () => no('workload token issuance'),

      async createCredentialProvider(req) {
        if (providers.has(req.name)) return undefined;
        const t = now();
        const p: CredentialProvider = {
          name: req.name,
          provider_type: req.provider_type,
          config: structuredClone(req.config ?? {}),
          created_at: t,
          updated_at: t,
        };
        providers.set(p.name, p);
        return showProvider(p);
      },
      async listCredentialProviders() {
        return [...providers.values()].sort((a, b) => a.name.localeCompare(b.name)).map(showProvider);
      },
      async getCredentialProvider(n) {
        const p = providers.get(n);
        return p && showProvider(p);
      },
      async updateCredentialProvider(n, req) {
        const p = providers.get(n);
        if (!p) return undefined;
        const next: CredentialProvider = { ...p, config: structuredClone(req.config), updated_at: now() };
        providers.set(n, next);
        return showProvider(next);
      },
      async deleteCredentialProvider(n) {
        return providers.delete(n);
      },

      async createWorkloadIdentity(req) {
        if (workloads.has(req.name)) return undefined;
        const t = now();
        const w: WorkloadIdentity = {
          name: req.name,
          allowed_return_urls: [...(req.allowed_return_urls ?? [])],
          created_at: t,
          updated_at: t,
        };
        workloads.set(w.name, w);
        return structuredClone(w);
      },
      async listWorkloadIdentities() {
        return [...workloads.values()].sort((a, b) => a.name.localeCompare(b.name)).map((w) => structuredClone(w));
      },
      async getWorkloadIdentity(n) {
        const w = workloads.get(n);
        return w && structuredClone(w);
      },
      async updateWorkloadIdentity(n, req) {
        const w = workloads.get(n);
        if (!w) return undefined;
        const next: WorkloadIdentity = { ...w, allowed_return_urls: [...req.allowed_return_urls], updated_at: now() };
        workloads.set(n, next);
        return structuredClone(next);
      },
      async deleteWorkloadIdentity(n) {
        return workloads.delete(n);
      },
      healthcheck: async () => 'ok',
      close: async () => {
        providers.clear();
        workloads.clear();
      },
    };
  },
};
