import { ExpiringLru } from './lru.ts';

/**
 * Verified bearer tokens until they expire, looked up on every /validate.
 *
 * A token header arrives as a new string on each request, so a Map keyed by
 * the whole token hashes all of it (300-1,000+ characters for a JWT) on every
 * lookup. Keyed by its last 32 characters instead (a JWT's signature, which
 * differs between any two tokens) the hash is short, and the entry keeps the
 * full token to compare: a token that only shares the tail is a miss, never
 * another token's identity. Two live tokens with the same tail just take turns
 * in the slot.
 */
export class TokenCache<V> {
  private readonly lru: ExpiringLru<{ token: string; value: V }>;

  constructor(max: number) {
    this.lru = new ExpiringLru(max);
  }

  private static key(token: string): string {
    return token.length > 64 ? token.slice(-32) : token;
  }

  get(token: string, now = Date.now()): V | undefined {
    const hit = this.lru.get(TokenCache.key(token), now);
    return hit !== undefined && hit.token === token ? hit.value : undefined;
  }

  set(token: string, value: V, expiresAt: number): void {
    this.lru.set(TokenCache.key(token), { token, value }, expiresAt);
  }

  get size(): number {
    return this.lru.size;
  }
}
