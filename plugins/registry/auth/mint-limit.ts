import { tooManyRequests } from '../../../core/errors.ts';
import type { Collection, Store } from '../../../core/store.ts';

const HOUR_MS = 3600_000;

/**
 * Token minting limit per user over a sliding hour, exact across replicas: a
 * user has `perHour` numbered slots in the core store, and a mint must claim a
 * free one with an atomic set-if-absent (SET NX on Redis) that expires an hour
 * later. Two replicas minting in the same instant cannot both take one slot, so
 * no interleaving of replicas lets more than `perHour` mints through in an hour.
 * The slots are read first (one MGET on Redis) so the usual mint costs two round trips.
 */
export class MintLimiter {
  private readonly col: Collection<number>;
  constructor(
    store: Store,
    private readonly perHour: number,
  ) {
    this.col = store.collection<number>('registry_token_mint_slots');
  }

  /** Records one mint, or throws 429 when the user is at the limit. */
  async take(username: string, now = Date.now()): Promise<void> {
    const keys = Array.from({ length: this.perHour }, (_, i) => `${username}#${i}`);
    const taken = await this.col.getMany(keys);
    for (const [i, at] of taken.entries()) {
      if (at !== undefined && at > now - HOUR_MS) continue;
      // Another replica may take this slot between the read and the claim: then try the next free one.
      if (await this.col.setIfAbsent(keys[i]!, now, HOUR_MS)) return;
    }
    // Every slot is taken: the earliest mint leaves the hour first, and frees its slot then.
    const times = (await this.col.getMany(keys)).filter((x): x is number => x !== undefined);
    const oldest = times.length ? Math.min(...times) : undefined;
    const retry = oldest === undefined ? 1 : Math.max(1, Math.ceil((oldest + HOUR_MS - now) / 1000));
    throw tooManyRequests(
      'SB_ERR_TOKEN_RATE_LIMIT',
      `Token minting limit reached: ${this.perHour} tokens per user per hour; try again in ${retry} s`,
      retry,
    );
  }
}
