import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeKey32 } from '../secrets.ts';

/**
 * Fernet-style tokens: 0x80 | 8-byte big-endian seconds | 16-byte IV |
 * AES-128-CBC ciphertext (PKCS7) | HMAC-SHA256 over all of the above, encoded
 * as urlsafe base64. The 32-byte key's first half signs, its second half
 * encrypts, so tokens interoperate with other Fernet implementations.
 */
const VERSION = 0x80;
const HEADER = 1 + 8 + 16;
const MAC = 32;

export class FernetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FernetError';
  }
}

export interface Fernet {
  encrypt(plaintext: string | Buffer, nowSeconds?: number): string;
  /** Throws FernetError on a malformed, tampered or (with ttlSeconds) expired token. */
  decrypt(token: string, opts?: { ttlSeconds?: number; nowSeconds?: number }): Buffer;
  decryptString(token: string, opts?: { ttlSeconds?: number; nowSeconds?: number }): string;
}

function decodeToken(token: string): Buffer {
  const t = token.trim();
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(t)) throw new FernetError('token is not urlsafe base64');
  return Buffer.from(t, 'base64url');
}

export function createFernet(key: string | Buffer): Fernet {
  const raw = typeof key === 'string' ? decodeKey32(key) : key.length === 32 ? key : undefined;
  if (!raw) throw new FernetError('Fernet key must be 32 bytes (base64 or urlsafe base64)');
  const signingKey = raw.subarray(0, 16);
  const encryptionKey = raw.subarray(16, 32);
  const mac = (data: Buffer) => createHmac('sha256', signingKey).update(data).digest();

  const decrypt = (token: string, opts: { ttlSeconds?: number; nowSeconds?: number } = {}): Buffer => {
    const data = decodeToken(token);
    if (data.length < HEADER + 16 + MAC || (data.length - HEADER - MAC) % 16 !== 0)
      throw new FernetError('token has the wrong length');
    if (data[0] !== VERSION) throw new FernetError('unknown token version');
    const body = data.subarray(0, data.length - MAC);
    // The MAC is checked before anything is decrypted, so a tampered token never reaches the cipher.
    if (!timingSafeEqual(mac(body), data.subarray(data.length - MAC)))
      throw new FernetError('token signature does not match (tampered or wrong key)');
    const issued = Number(data.readBigUInt64BE(1));
    if (opts.ttlSeconds !== undefined) {
      const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
      if (issued + opts.ttlSeconds < now) throw new FernetError('token has expired');
    }
    const iv = data.subarray(9, HEADER);
    try {
      const d = createDecipheriv('aes-128-cbc', encryptionKey, iv);
      return Buffer.concat([d.update(body.subarray(HEADER)), d.final()]);
    } catch {
      throw new FernetError('token padding is invalid');
    }
  };

  return {
    encrypt(plaintext, nowSeconds = Math.floor(Date.now() / 1000)) {
      const iv = randomBytes(16);
      const c = createCipheriv('aes-128-cbc', encryptionKey, iv);
      const ct = Buffer.concat([
        c.update(typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext),
        c.final(),
      ]);
      const header = Buffer.alloc(9);
      header[0] = VERSION;
      header.writeBigUInt64BE(BigInt(nowSeconds), 1);
      const body = Buffer.concat([header, iv, ct]);
      // Padded urlsafe base64, as Python's cryptography.fernet writes it.
      return Buffer.concat([body, mac(body)])
        .toString('base64')
        .replace(/\+/g, '-')
        .replace(/\//g, '_');
    },
    decrypt,
    decryptString: (token, opts) => decrypt(token, opts).toString('utf8'),
  };
}
