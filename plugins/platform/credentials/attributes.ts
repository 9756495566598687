import { createFernet, FernetError } from '../../../core/crypto/fernet.ts';
import type { Store } from '../../../core/store.ts';

export type Attributes = Record<string, string>;

/** Spec 2.10 / 8: only the last 4 characters are visible; short values show nothing. */
export function mask(value: string): string {
  return value.length > 8 ? `****${value.slice(-4)}` : '****';
}

/**
 * Per-principal credential attributes in the core store, each value encrypted
 * (Fernet, with the process ENCRYPTION_KEY) so the store never holds them in
 * clear. Values leave this module only masked, or decrypted for the code that
 * resolves provider credentials; they are never logged.
 */
export interface CredentialVault {
  /** Name -> masked value; a value that no longer decrypts (key changed) shows as `****`. */
  masked(principalId: string): Promise<Attributes>;
  /** Name -> clear value, for credential resolution; undecryptable values are left out. */
  reveal(principalId: string): Promise<Attributes>;
  /** Merge `attrs` into what is stored; returns every stored name, masked. */
  write(principalId: string, attrs: Attributes): Promise<Attributes>;
  /** False when no such attribute was stored. */
  remove(principalId: string, name: string): Promise<boolean>;
  has(principalId: string): Promise<boolean>;
}

export function credentialVault(store: Store, encryptionKey: string): CredentialVault {
  const col = store.collection<Attributes>('platform_credentials');
  const fernet = createFernet(encryptionKey);
  const open = (token: string): string | undefined => {
    try {
      return fernet.decryptString(token);
    } catch (err) {
      if (err instanceof FernetError) return undefined;
      throw err;
    }
  };
  const maskAll = (sealed: Attributes): Attributes =>
    Object.fromEntries(
      Object.entries(sealed).map(([k, v]) => {
        const clear = open(v);
        return [k, clear === undefined ? '****' : mask(clear)];
      }),
    );
  return {
    async masked(id) {
      return maskAll((await col.get(id)) ?? {});
    },
    async reveal(id) {
      const out: Attributes = {};
      for (const [k, v] of Object.entries((await col.get(id)) ?? {})) {
        const clear = open(v);
        if (clear !== undefined) out[k] = clear;
      }
      return out;
    },
    async write(id, attrs) {
      const sealed = { ...((await col.get(id)) ?? {}) };
      for (const [k, v] of Object.entries(attrs)) sealed[k] = fernet.encrypt(v);
      await col.set(id, sealed);
      return maskAll(sealed);
    },
    async remove(id, name) {
      const current = (await col.get(id)) ?? {};
      if (!Object.hasOwn(current, name)) return false;
      const { [name]: _removed, ...rest } = current;
      if (Object.keys(rest).length === 0) await col.delete(id);
      else await col.set(id, rest);
      return true;
    },
    async has(id) {
      const current = await col.get(id);
      return Boolean(current && Object.keys(current).length > 0);
    },
  };
}
