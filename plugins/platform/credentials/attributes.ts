import type { Store } from '../../../core/store.ts';

export type Attributes = Record<string, string>;

/**
 * Per-principal credential attributes in the core store. Values leave this
 * module only masked (`mask`) or handed to providers by the code that
 * resolves credentials; they are never logged.
 */
export const attributesOf = (store: Store) => store.collection<Attributes>('platform_credentials');

/** Spec 2.10 / 8: only the last 4 characters are visible; short values show nothing. */
export function mask(value: string): string {
  return value.length > 8 ? `****${value.slice(-4)}` : '****';
}

export const masked = (attrs: Attributes): Attributes => Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, mask(v)]));
