import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  SignJWT,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type JWK,
  type CryptoKey,
  type KeyObject,
} from 'jose';

/** Under DATA_DIR, mode 0600: the private key that signs workload tokens. */
export const WORKLOAD_KEY_FILE = 'workload-signing-key.json';
const ALG = 'ES256';

export interface WorkloadClaims {
  sub: string;
  aud: string;
  iss: string;
  ttlSeconds: number;
  extra?: Record<string, unknown>;
}

/**
 * The workload-token signing key: generated on first use into DATA_DIR (so
 * every replica sharing the directory and every restart signs with the same
 * key), published as a public JWK by kid.
 */
export class WorkloadKeys {
  private loaded?: Promise<{
    priv: CryptoKey | KeyObject | Uint8Array;
    pub: CryptoKey | KeyObject | Uint8Array;
    jwk: JWK;
  }>;

  constructor(private readonly dataDir: string) {}

  private async load() {
    const file = join(this.dataDir, WORKLOAD_KEY_FILE);
    let priv: JWK;
    try {
      priv = JSON.parse(readFileSync(file, 'utf8')) as JWK;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`Cannot read the workload signing key ${file}: ${(err as Error).message}`);
      const { privateKey } = await generateKeyPair(ALG, { extractable: true });
      const made = await exportJWK(privateKey);
      made.kid = await calculateJwkThumbprint(made);
      made.alg = ALG;
      mkdirSync(dirname(file), { recursive: true });
      try {
        // 'wx': two processes starting together keep the first key.
        writeFileSync(file, JSON.stringify(made), { mode: 0o600, flag: 'wx' });
        chmodSync(file, 0o600);
        priv = made;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        priv = JSON.parse(readFileSync(file, 'utf8')) as JWK;
      }
    }
    const { d: _private, ...pubJwk } = priv;
    const jwk: JWK = { ...pubJwk, use: 'sig', alg: ALG };
    return { priv: await importJWK(priv, ALG), pub: await importJWK(jwk, ALG), jwk };
  }

  private keys() {
    this.loaded ??= this.load();
    this.loaded.catch(() => (this.loaded = undefined));
    return this.loaded;
  }

  async publicJwk(): Promise<JWK> {
    return (await this.keys()).jwk;
  }

  async sign(c: WorkloadClaims): Promise<string> {
    const { priv, jwk } = await this.keys();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ ...(c.extra ?? {}), token_use: 'workload' })
      .setProtectedHeader({ alg: ALG, kid: jwk.kid, typ: 'JWT' })
      .setIssuer(c.iss)
      .setSubject(c.sub)
      .setAudience(c.aud)
      .setIssuedAt(now)
      .setExpirationTime(now + c.ttlSeconds)
      .sign(priv);
  }

  /** The claims of a workload token this process signed; throws when forged, expired or for another audience. */
  async verify(token: string, iss: string, aud: string): Promise<Record<string, unknown> & { sub: string }> {
    const { pub } = await this.keys();
    const { payload } = await jwtVerify(token, pub, { issuer: iss, audience: aud, algorithms: [ALG] });
    if (payload.token_use !== 'workload' || typeof payload.sub !== 'string') throw new Error('not a workload token');
    return payload as Record<string, unknown> & { sub: string };
  }
}
