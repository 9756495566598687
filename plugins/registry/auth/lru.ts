/**
 * A bounded map that forgets entries past their expiry and, when full, the
 * least recently used one. Verified tokens live here until they expire.
 *
 * Recency is tracked in the Map's insertion order. Moving an entry to the young
 * end costs a delete and a set on every hit, which is the /validate hot path;
 * so an entry moved (or inserted) within the last max/2 insertions-or-moves
 * stays where it is. It cannot be the next one evicted: at least max/2 entries
 * are older than it, so it gets another max/2 insertions to be used again.
 */
export class ExpiringLru<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number; tick: number }>();
  private tick = 0;
  private readonly stale: number;

  constructor(private readonly max: number) {
    this.stale = Math.max(1, max >> 1);
  }

  get(key: string, now = Date.now()): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= now) {
      this.map.delete(key);
      return undefined;
    }
    if (this.tick - hit.tick >= this.stale) {
      this.map.delete(key);
      hit.tick = ++this.tick;
      this.map.set(key, hit);
    }
    return hit.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.map.delete(key);
    this.map.set(key, { value, expiresAt, tick: ++this.tick });
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
