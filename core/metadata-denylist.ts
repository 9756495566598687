/**
 * `metadata_denylists` (spec 4.8): operator-listed top-level metadata keys are
 * removed on every read path, whatever the backend. Nested keys are not
 * examined and writes are not filtered.
 */
export type MetadataFilter = ((primitive: string, metadata: Record<string, unknown>) => Record<string, unknown>) & {
  /**
   * What a read path hands out for a record of `primitive`: a copy with the
   * denied keys stripped, or, when nothing is denied for it, the record as it
   * is. The response schema's serialiser writes only the schema's fields, so
   * no copy is needed then (this is every memory read's hot path).
   */
  view<T extends { metadata: Record<string, unknown> }>(primitive: string): (record: T) => T;
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
  const view = <T extends { metadata: Record<string, unknown> }>(primitive: string) =>
    (lists.get(primitive)?.size ?? 0) > 0
      ? (r: T): T => ({ ...r, metadata: strip(primitive, r.metadata) })
      : (r: T): T => r;
  return Object.assign(strip, { view });
}
