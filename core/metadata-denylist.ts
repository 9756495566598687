/**
 * `metadata_denylists` (spec 4.8): operator-listed top-level metadata keys are
 * removed on every read path, whatever the backend. Nested keys are not
 * examined and writes are not filtered.
 */
export type MetadataFilter = ((primitive: string, metadata: Record<string, unknown>) => Record<string, unknown>) & {
  /** Whether any key is denied for this primitive: without one, a read path can hand records out as they are. */
  filters(primitive: string): boolean;
};

export function metadataFilter(denylists: Record<string, string[]> | undefined): MetadataFilter {
  const lists = new Map(Object.entries(denylists ?? {}).map(([p, keys]) => [p, new Set(keys)]));
  const strip = (primitive: string, metadata: Record<string, unknown>) => {
    const deny = lists.get(primitive);
    if (!deny || deny.size === 0 || !metadata) return metadata;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(metadata)) if (!deny.has(k)) out[k] = v;
    return out;
  };
  return Object.assign(strip, { filters: (primitive: string) => (lists.get(primitive)?.size ?? 0) > 0 });
}
