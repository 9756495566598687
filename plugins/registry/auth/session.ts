import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'mcp_gateway_session';
export const CSRF_COOKIE = 'mcp_gateway_csrf';
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_FIELD = 'csrf_token';

/** What the signed session cookie carries (spec 5.1: username, groups, provider, scopes). */
export interface SessionPayload {
  sid: string;
  username: string;
  groups: string[];
  scopes: string[];
  provider: string;
  /** seconds since epoch */
  exp: number;
  /**
   * ms since epoch. A session issued before the store's data began (StoreSeeds.epoch) is refused: its
   * logout may have been recorded in data that is gone. Absent in cookies from before this field: refused.
   */
  issued?: number;
}

function mac(key: Uint8Array, data: string): string {
  return createHmac('sha256', key).update(data).digest('base64url');
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function signSession(
  key: Uint8Array,
  p: Omit<SessionPayload, 'sid' | 'exp' | 'issued'>,
  hours: number,
): { value: string; payload: SessionPayload } {
  const payload: SessionPayload = {
    ...p,
    sid: randomBytes(16).toString('base64url'),
    issued: Date.now(),
    exp: Math.floor(Date.now() / 1000 + hours * 3600),
  };
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return { value: `${body}.${mac(key, `session:${body}`)}`, payload };
}

/** The payload of a genuine, unexpired cookie, else undefined. */
export function verifySession(key: Uint8Array, value: string): SessionPayload | undefined {
  const dot = value.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const body = value.slice(0, dot);
  if (!safeEqual(value.slice(dot + 1), mac(key, `session:${body}`))) return undefined;
  try {
    const p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as SessionPayload;
    if (typeof p.exp !== 'number' || p.exp * 1000 <= Date.now() || typeof p.username !== 'string') return undefined;
    return p;
  } catch {
    return undefined;
  }
}

/** The CSRF token is bound to the session id, so a token from another session never passes. */
export function csrfTokenFor(key: Uint8Array, sid: string): string {
  return mac(key, `csrf:${sid}`);
}

export function csrfMatches(key: Uint8Array, sid: string, presented: string | undefined): boolean {
  return typeof presented === 'string' && presented.length > 0 && safeEqual(presented, csrfTokenFor(key, sid));
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const v = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

export function cookieHeader(
  name: string,
  value: string,
  opts: { maxAgeSeconds: number; httpOnly: boolean; secure: boolean },
): string {
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(opts.maxAgeSeconds))}`,
    'SameSite=Lax',
  ];
  if (opts.httpOnly) parts.push('HttpOnly');
  if (opts.secure) parts.push('Secure');
  return parts.join('; ');
}
