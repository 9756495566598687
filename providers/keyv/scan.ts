import type { Collection } from '../../core/store.ts';

/**
 * Every entry of a collection as an array, so callers may write to the store
 * while walking the result (a scan sees writes ahead of its cursor; a
 * snapshot does not surprise a caller that deletes as it goes). The store's
 * scans page (core/store-sqlite.ts), so this holds no statement open.
 */
export async function scanAll<T>(col: Collection<T>): Promise<Array<[string, T]>> {
  const out: Array<[string, T]> = [];
  for await (const entry of col.entries()) out.push(entry);
  return out;
}
