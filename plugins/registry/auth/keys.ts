import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SECRET_KEY_FILE, loadSecrets } from '../../../core/secrets.ts';

/**
 * Secrets kept under DATA_DIR when the operator gave none, so `npm start`
 * needs no setup and a restart keeps sessions and tokens valid. Files are
 * created with mode 0600 and only their path is ever logged.
 */
export function readOrCreateSecretFile(
  dataDir: string,
  name: string,
  make: () => string,
): { value: string; created: boolean; path: string } {
  const path = join(dataDir, name);
  try {
    const value = readFileSync(path, 'utf8').trim();
    if (value) return { value, created: false, path };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  const value = make();
  // 'wx' so two processes starting together cannot both write different values.
  try {
    writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      return { value: readFileSync(path, 'utf8').trim(), created: false, path };
    throw err;
  }
  chmodSync(path, 0o600);
  return { value, created: true, path };
}

/**
 * SECRET_KEY signs session cookies and self-signed tokens: env, then config
 * `registry.secret_key`, else core/secrets.ts (DATA_DIR/secret_key, 0600).
 */
export function loadSecretKey(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  configured?: string,
): { key: Uint8Array; source: string } {
  const fromEnv = env.SECRET_KEY?.trim();
  if (fromEnv) return { key: new TextEncoder().encode(fromEnv), source: 'env SECRET_KEY' };
  if (configured) return { key: new TextEncoder().encode(configured), source: 'config registry.secret_key' };
  return {
    key: new TextEncoder().encode(loadSecrets(dataDir, { ...env, SECRET_KEY: undefined }).secretKey),
    source: join(dataDir, SECRET_KEY_FILE),
  };
}

export interface AdminCredentials {
  username: string;
  password: string;
  /** Where the password came from; a file path when it was generated. */
  source: string;
  generated: boolean;
}

/** The local admin: env, then config, else a generated password kept in DATA_DIR/admin_password. */
export function loadAdminCredentials(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  cfg: { admin_user?: string; admin_password?: string },
): AdminCredentials {
  const username = env.ADMIN_USER || cfg.admin_user || 'admin';
  if (env.ADMIN_PASSWORD?.trim())
    return { username, password: env.ADMIN_PASSWORD, source: 'env ADMIN_PASSWORD', generated: false };
  if (cfg.admin_password)
    return { username, password: cfg.admin_password, source: 'config registry.admin_password', generated: false };
  const f = readOrCreateSecretFile(dataDir, 'admin_password', () => randomBytes(18).toString('base64url'));
  return { username, password: f.value, source: f.path, generated: f.created };
}
