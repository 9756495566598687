import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
  /** DATA_DIR, where generated secrets are kept as `secret_key` and `encryption_key`. */
  dir: string;
}

/** File names under DATA_DIR; `secret_key` is the name registry auth reads too. */
export const SECRET_KEY_FILE = 'secret_key';
export const ENCRYPTION_KEY_FILE = 'encryption_key';

/** Decodes base64 or urlsafe base64, padded or not; undefined unless it is exactly 32 bytes. */
export function decodeKey32(text: string): Buffer | undefined {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return undefined;
  const bytes = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

/** The file's value, or a new one written with mode 0600 ('wx': two processes starting together agree). */
function readOrCreate(file: string, make: () => string): string {
  try {
    const value = readFileSync(file, 'utf8').trim();
    if (value) return value;
    throw new StartupError('SB_ERR_SECRETS_UNREADABLE', `${file} is empty; remove it to generate a new secret`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (err instanceof StartupError) throw err;
      throw new StartupError('SB_ERR_SECRETS_UNREADABLE', `Cannot read ${file}: ${(err as Error).message}`, err);
    }
  }
  const value = make();
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
    return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw new StartupError(
      'SB_ERR_SECRETS_UNWRITABLE',
      `Cannot keep a generated secret in ${file}: ${(err as Error).message}`,
      err,
    );
  }
}

export function loadSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): Secrets {
  const envSecret = env.SECRET_KEY?.trim() || undefined;
  const envEnc = env.ENCRYPTION_KEY?.trim() || undefined;
  if (envEnc && !decodeKey32(envEnc)) {
    throw new StartupError(
      'SB_ERR_CONFIG_INVALID',
      'ENCRYPTION_KEY must be 32 bytes in base64 or urlsafe base64 (e.g. `openssl rand -base64 32`)',
    );
  }
  const encFile = join(dataDir, ENCRYPTION_KEY_FILE);
  const secretKey =
    envSecret ?? readOrCreate(join(dataDir, SECRET_KEY_FILE), () => randomBytes(32).toString('base64url'));
  const encryptionKey = envEnc ?? readOrCreate(encFile, () => randomBytes(32).toString('base64url'));
  if (!decodeKey32(encryptionKey))
    throw new StartupError('SB_ERR_SECRETS_UNREADABLE', `${encFile} does not hold a 32-byte base64 key`);
  return { secretKey, encryptionKey, dir: dataDir };
}
