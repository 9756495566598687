import { randomUUID } from 'node:crypto';
import type { Store } from '../../../core/store.ts';

/**
 * One periodic health sweep per interval across every replica on a shared
 * store. Time is cut into slots of one interval (slot n = [n·I, (n+1)·I) in
 * wall-clock time, so every replica numbers them alike); a replica whose timer
 * ticks in slot n sweeps only if it is the first to claim `n`, an atomic
 * set-if-absent in the store (SET NX on Redis). Each replica ticks once per
 * interval, so exactly one sweep starts per slot whichever replica's timer
 * comes first, and adding replicas adds no backend traffic. A claim expires
 * after two intervals. Nothing fences the writes of a sweep that outlasts its
 * interval: the next slot's sweep (maybe on another replica) can then check
 * some servers a second time, and the later result wins, as with a refresh.
 *
 * A store that cannot be asked means no sweep this time (its results could not
 * be saved anyway); the next tick asks again.
 */
export class SweepClaim {
  private readonly owner = randomUUID();

  constructor(
    private readonly store: Store,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when this replica won the current slot and should sweep now. */
  async claim(): Promise<boolean> {
    const slot = Math.floor(this.now() / this.intervalMs);
    return this.store
      .collection<string>('registry_health_sweeps')
      .setIfAbsent(String(slot), this.owner, this.intervalMs * 2);
  }
}
