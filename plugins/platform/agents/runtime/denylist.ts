/**
 * Operator-configured metadata denylists (`metadata_denylists: {memory: [keys]}`):
 * listed top-level keys are removed from what the agent memory tools return.
 */
export function metadataFilter(denylists: Record<string, string[]> | undefined) {
  return (primitive: string, metadata: Record<string, unknown>): Record<string, unknown> => {
    const deny = denylists?.[primitive];
    if (!deny?.length) return metadata;
    return Object.fromEntries(Object.entries(metadata).filter(([k]) => !deny.includes(k)));
  };
}
