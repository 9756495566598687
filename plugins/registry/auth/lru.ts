/** A bounded map that forgets the least recently used entry and entries past their expiry. */
export class ExpiringLru<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number }>();
  constructor(private readonly max: number) {}

  get(key: string, now = Date.now()): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    this.map.delete(key);
    if (hit.expiresAt <= now) return undefined;
    this.map.set(key, hit);
    return hit.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.map.delete(key);
    this.map.set(key, { value, expiresAt });
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
