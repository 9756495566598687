import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { tooManyRequests } from '../../../core/errors.ts';
import type { Collection, Store } from '../../../core/store.ts';

export interface LockoutSettings {
  enabled: boolean;
  /** Failures of one username from one client address within the window before it is locked. */
  max_attempts: number;
  /** Failures from one client address, any username, within the window before it is locked. */
  max_attempts_per_ip: number;
  window_s: number;
  /** Peers whose X-Forwarded-For is believed (the load balancer); anyone else's address is the socket's. */
  trusted_proxies: string[];
}

/** What a caller does with the password check's outcome. */
export interface LoginAttempt {
  failed(): Promise<void>;
  succeeded(): Promise<void>;
}

const stripV4Mapped = (ip: string) => (ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip);

/**
 * The client's address: the socket peer, or, when that peer is a trusted proxy,
 * the rightmost X-Forwarded-For entry that is not itself a trusted proxy (nginx's
 * $proxy_add_x_forwarded_for appends the address it saw, so entries left of it
 * are whatever the client claimed and are not believed).
 */
export function clientAddress(request: FastifyRequest, trusted: ReadonlySet<string>): string {
  let ip = stripV4Mapped(request.socket?.remoteAddress ?? request.ip ?? 'unknown');
  if (!trusted.has(ip)) return ip;
  const xff = request.headers['x-forwarded-for'];
  const hops = (Array.isArray(xff) ? xff.join(',') : (xff ?? ''))
    .split(',')
    .map((s) => stripV4Mapped(s.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    ip = hops[i]!;
    if (!trusted.has(ip)) return ip;
  }
  return ip;
}

/** The username of an HTTP Basic credential (X-Authorization first, as identify.ts reads it), else undefined. */
export function basicUsername(headers: FastifyRequest['headers']): string | undefined {
  const pick = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const raw = pick(headers['x-authorization']) ?? pick(headers.authorization);
  if (raw?.slice(0, 6).toLowerCase() !== 'basic ') return undefined;
  const decoded = Buffer.from(raw.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? decoded : decoded.slice(0, colon);
}

/**
 * Login lockout shared by every replica: failed local logins (the login form and
 * HTTP Basic) are counted per username+client address and per client address,
 * each over a sliding window. A subject with `max` failures in the window is
 * locked: its attempts answer 429 with Retry-After, even with the right
 * password, until its oldest failure leaves the window. Keyed on the address
 * too so that nobody can lock the admin out from elsewhere by guessing wrong on
 * purpose.
 *
 * The counters are numbered slots in the core store claimed with set-if-absent
 * (SET NX on Redis) and expiring with the window, as the mint limit does: exact
 * across replicas, since two failures at the same instant cannot take one slot.
 * Usernames are hashed in the keys: people type passwords into username fields.
 */
export class LoginLockout {
  private readonly col: Collection<number>;
  private readonly windowMs: number;
  readonly trusted: ReadonlySet<string>;

  constructor(
    store: Store,
    private readonly s: LockoutSettings,
  ) {
    this.col = store.collection<number>('registry_login_failures');
    this.windowMs = s.window_s * 1000;
    this.trusted = new Set(s.trusted_proxies.map(stripV4Mapped));
  }

  /** Throws 429 when the username or address is locked; else the attempt to report the outcome to. */
  async begin(username: string, ip: string, now = Date.now()): Promise<LoginAttempt> {
    if (!this.s.enabled) return { failed: async () => {}, succeeded: async () => {} };
    const user = `u:${ip}|${createHash('sha256').update(username).digest('base64url').slice(0, 22)}`;
    const addr = `ip:${ip}`;
    const userKeys = slots(user, this.s.max_attempts);
    const addrKeys = slots(addr, this.s.max_attempts_per_ip);
    const values = await this.col.getMany([...userKeys, ...addrKeys]);
    const live = (v: number | undefined): v is number => v !== undefined && v > now - this.windowMs;
    const userVals = values.slice(0, userKeys.length);
    const addrVals = values.slice(userKeys.length);
    const lockedFor = (vals: Array<number | undefined>) =>
      vals.every(live) ? Math.min(...(vals as number[])) + this.windowMs - now : 0;
    const wait = Math.max(lockedFor(userVals), lockedFor(addrVals));
    if (wait > 0) {
      const which =
        lockedFor(userVals) > 0
          ? `${this.s.max_attempts} failed logins for this username from your address`
          : `${this.s.max_attempts_per_ip} failed logins from your address`;
      const secs = Math.ceil(wait / 1000);
      throw tooManyRequests(
        'SB_ERR_AUTH_LOCKED_OUT',
        `Login locked: ${which} within ${this.s.window_s} s; try again in ${secs} s`,
        secs,
      );
    }
    return {
      failed: async () => {
        await Promise.all([this.claim(userKeys, userVals, now), this.claim(addrKeys, addrVals, now)]);
      },
      succeeded: async () => {
        // Only when there is something to clear: a Basic-authenticated script pays no write per request.
        const stale = userKeys.filter((_, i) => userVals[i] !== undefined);
        await Promise.all(stale.map((k) => this.col.delete(k)));
      },
    };
  }

  /** Takes the first free slot; another replica may take one between the read and the claim, then the next. */
  private async claim(keys: string[], seen: Array<number | undefined>, now: number): Promise<void> {
    for (const [i, at] of seen.entries()) {
      if (at !== undefined && at > now - this.windowMs) continue;
      if (await this.col.setIfAbsent(keys[i]!, now, this.windowMs)) return;
    }
    // Every slot taken: already at the limit, nothing more to count.
  }
}

const slots = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}#${i}`);
