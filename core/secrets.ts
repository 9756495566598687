import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from './errors.ts';

/**
 * The two process secrets: SECRET_KEY signs session cookies and self-signed
 * tokens; ENCRYPTION_KEY (32 bytes, base64 or urlsafe base64) encrypts backend
 * credentials. Either may come from the environment; a missing one is generated
 * on first start and kept under DATA_DIR so `npm start` needs no setup and a
 * restart keeps sessions and stored credentials readable.
 */
export interface Secrets {
  secretKey: string;
  /** Urlsafe base64 of 32 bytes: first half signs, second half encrypts (Fernet layout). */
  encryptionKey: string;
  /** Where generated secrets are kept (whether or not any was generated). */
  file: string;
}

export const SECRETS_FILE = 'secrets.json';

interface SecretsFile {
  secret_key?: string;
  encryption_key?: string;
}

/** Decodes base64 or urlsafe base64, padded or not; undefined unless it is exactly 32 bytes. */
export function decodeKey32(text: string): Buffer | undefined {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return undefined;
  const bytes = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

function readFile(file: string): SecretsFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new StartupError('SB_ERR_SECRETS_UNREADABLE', `Cannot read ${file}: ${(err as Error).message}`, err);
  }
  try {
    const parsed = JSON.parse(text) as SecretsFile;
    return parsed && typeof parsed === 'object' ? parsed : {};
  } catch (err) {
    throw new StartupError('SB_ERR_SECRETS_UNREADABLE', `${file} is not valid JSON; fix it or remove it to generate new secrets (stored credentials would become unreadable)`, err);
  }
}

export function loadSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): Secrets {
  const file = join(dataDir, SECRETS_FILE);
  const envSecret = env.SECRET_KEY?.trim() || undefined;
  const envEnc = env.ENCRYPTION_KEY?.trim() || undefined;
  if (envEnc && !decodeKey32(envEnc)) {
    throw new StartupError('SB_ERR_CONFIG_INVALID', 'ENCRYPTION_KEY must be 32 bytes in base64 or urlsafe base64 (e.g. `openssl rand -base64 32`)');
  }
  if (envSecret && envEnc) return { secretKey: envSecret, encryptionKey: envEnc, file };

  const stored = readFile(file);
  if (stored.encryption_key && !decodeKey32(stored.encryption_key)) {
    throw new StartupError('SB_ERR_SECRETS_UNREADABLE', `${file}: encryption_key is not a 32-byte base64 key`);
  }
  const next: SecretsFile = { ...stored };
  if (!envSecret && !next.secret_key) next.secret_key = randomBytes(32).toString('base64url');
  if (!envEnc && !next.encryption_key) next.encryption_key = randomBytes(32).toString('base64url');
  if (next.secret_key !== stored.secret_key || next.encryption_key !== stored.encryption_key) {
    try {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, JSON.stringify(next, null, 2) + '\n', { mode: 0o600 });
      // mode only applies on create; an existing file keeps whatever it had.
      chmodSync(file, 0o600);
    } catch (err) {
      throw new StartupError('SB_ERR_SECRETS_UNWRITABLE', `Cannot keep generated secrets in ${file}: ${(err as Error).message}`, err);
    }
  }
  return { secretKey: envSecret ?? next.secret_key!, encryptionKey: envEnc ?? next.encryption_key!, file };
}
