import type { AuthRequest } from '../../core/primitives/auth.ts';

const header = (req: AuthRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
};

/**
 * The credential a caller presents (spec 5.2): `Authorization: Bearer <token>`,
 * else `X-Api-Key: <key>`. Other Authorization schemes (e.g. Basic) are not ours
 * and count as no credential.
 */
export function presentedCredential(req: AuthRequest): string | undefined {
  const auth = header(req, 'authorization');
  if (auth) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (m) return m[1];
  }
  return header(req, 'x-api-key');
}
