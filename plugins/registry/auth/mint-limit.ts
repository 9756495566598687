import { tooManyRequests } from '../../../core/errors.ts';
import type { Collection, Store } from '../../../core/store.ts';

const HOUR_MS = 3600_000;

/**
 * Token minting limit per user over a sliding hour, kept in the core store so
 * every replica counts the same mints. Two replicas minting for one user in the
 * same instant may each miss the other's write; the limit is a brake, not a quota.
 */
export class MintLimiter {
  private readonly col: Collection<number[]>;
  constructor(
    store: Store,
    private readonly perHour: number,
  ) {
    this.col = store.collection<number[]>('registry_token_mints');
  }

  /** Records one mint, or throws 429 when the user is at the limit. */
  async take(username: string, now = Date.now()): Promise<void> {
    const recent = ((await this.col.get(username)) ?? []).filter((t) => t > now - HOUR_MS);
    if (recent.length >= this.perHour) {
      // A slot frees when enough of the recent mints leave the hour for the count to drop below the
      // limit (more than one when the limit was lowered since).
      const freeing = recent[recent.length - this.perHour];
      const retry = freeing === undefined ? HOUR_MS / 1000 : Math.max(1, Math.ceil((freeing + HOUR_MS - now) / 1000));
      throw tooManyRequests(
        'SB_ERR_TOKEN_RATE_LIMIT',
        `Token minting limit reached: ${this.perHour} tokens per user per hour; try again in ${retry} s`,
        retry,
      );
    }
    recent.push(now);
    await this.col.set(username, recent, HOUR_MS);
  }
}
