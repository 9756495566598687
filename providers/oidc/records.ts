import type { Fernet } from '../../core/crypto/fernet.ts';
import type { Collection, Store } from '../../core/store.ts';
import {
  SECRET_CONFIG_KEYS,
  redactSecrets,
  type CreateCredentialProviderRequest,
  type CredentialProvider,
  type WorkloadIdentity,
} from '../../core/primitives/identity.ts';

/** A secret config value as stored: its Fernet token under ENCRYPTION_KEY. */
type Sealed = { $fernet: string };
const isSealed = (v: unknown): v is Sealed =>
  Boolean(v && typeof v === 'object' && typeof (v as Sealed).$fernet === 'string');

function seal(fernet: Fernet, v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => seal(fernet, x));
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [
        k,
        SECRET_CONFIG_KEYS.test(k) && (typeof x === 'string' || typeof x === 'number')
          ? { $fernet: fernet.encrypt(String(x)) }
          : seal(fernet, x),
      ]),
    );
  }
  return v;
}

function unseal(fernet: Fernet, v: unknown): unknown {
  if (isSealed(v)) return fernet.decryptString(v.$fernet);
  if (Array.isArray(v)) return v.map((x) => unseal(fernet, x));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unseal(fernet, x)]));
  return v;
}

/** Sealed values read as secrets so the shared redaction hides them whatever their key. */
function masked(v: unknown): unknown {
  if (isSealed(v)) return '********';
  if (Array.isArray(v)) return v.map(masked);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, masked(x)]));
  return v;
}

/**
 * Credential providers and workload identities in the core store. Secret
 * config values (client secrets, API keys: SECRET_CONFIG_KEYS) are encrypted
 * with ENCRYPTION_KEY before they are written and decrypted only for use.
 */
export class IdentityRecords {
  private readonly providers: Collection<CredentialProvider>;
  private readonly workloads: Collection<WorkloadIdentity>;

  constructor(
    store: Store,
    instance: string,
    private readonly fernet: Fernet,
  ) {
    this.providers = store.collection<CredentialProvider>(`identity_oidc_credential_providers:${instance}`);
    this.workloads = store.collection<WorkloadIdentity>(`identity_oidc_workloads:${instance}`);
  }

  private shown(p: CredentialProvider): CredentialProvider {
    return { ...p, config: redactSecrets(masked(p.config) as Record<string, unknown>) };
  }

  async createProvider(req: CreateCredentialProviderRequest): Promise<CredentialProvider | undefined> {
    const t = new Date().toISOString();
    const p: CredentialProvider = {
      name: req.name,
      provider_type: req.provider_type,
      config: seal(this.fernet, req.config ?? {}) as Record<string, unknown>,
      created_at: t,
      updated_at: t,
    };
    if (!(await this.providers.setIfAbsent(p.name, p))) return undefined;
    return this.shown(p);
  }

  async listProviders(): Promise<CredentialProvider[]> {
    const out: CredentialProvider[] = [];
    for await (const [, p] of this.providers.entries()) out.push(this.shown(p));
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  async getProvider(name: string): Promise<CredentialProvider | undefined> {
    const p = await this.providers.get(name);
    return p && this.shown(p);
  }

  /** With its secrets decrypted: for use inside the provider only, never for a response. */
  async providerForUse(name: string): Promise<CredentialProvider | undefined> {
    const p = await this.providers.get(name);
    return p && { ...p, config: unseal(this.fernet, p.config) as Record<string, unknown> };
  }

  async updateProvider(name: string, config: Record<string, unknown>): Promise<CredentialProvider | undefined> {
    const p = await this.providers.get(name);
    if (!p) return undefined;
    const next: CredentialProvider = {
      ...p,
      config: seal(this.fernet, config) as Record<string, unknown>,
      updated_at: new Date().toISOString(),
    };
    await this.providers.set(name, next);
    return this.shown(next);
  }

  deleteProvider(name: string): Promise<boolean> {
    return this.providers.delete(name);
  }

  async createWorkload(name: string, urls: string[]): Promise<WorkloadIdentity | undefined> {
    const t = new Date().toISOString();
    const w: WorkloadIdentity = { name, allowed_return_urls: urls, created_at: t, updated_at: t };
    return (await this.workloads.setIfAbsent(name, w)) ? w : undefined;
  }

  async listWorkloads(): Promise<WorkloadIdentity[]> {
    const out: WorkloadIdentity[] = [];
    for await (const [, w] of this.workloads.entries()) out.push(w);
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  getWorkload(name: string): Promise<WorkloadIdentity | undefined> {
    return this.workloads.get(name);
  }

  async updateWorkload(name: string, urls: string[]): Promise<WorkloadIdentity | undefined> {
    const w = await this.workloads.get(name);
    if (!w) return undefined;
    const next = { ...w, allowed_return_urls: urls, updated_at: new Date().toISOString() };
    await this.workloads.set(name, next);
    return next;
  }

  deleteWorkload(name: string): Promise<boolean> {
    return this.workloads.delete(name);
  }
}
