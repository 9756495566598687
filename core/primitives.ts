/** The primitive keys of the platform gateway, and the header each can be routed by. */
export const PRIMITIVES = [
  'memory',
  'llm',
  'browser',
  'tools',
  'policy',
  'evaluations',
  'identity',
  'code_interpreter',
  'observability',
] as const;
export type PrimitiveName = (typeof PRIMITIVES)[number];

/**
 * Kinds that are provided by provider packages but are not routed per request
 * through `/api/v1`: registry scanners and platform auth backends.
 */
export const SERVICE_KINDS = ['scanners', 'auth'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];
export type ProviderKind = PrimitiveName | ServiceKind;

export const PROVIDER_KINDS: readonly ProviderKind[] = [...PRIMITIVES, ...SERVICE_KINDS];

export function isPrimitive(name: string): name is PrimitiveName {
  return (PRIMITIVES as readonly string[]).includes(name);
}

/** `code_interpreter` -> `x-provider-code-interpreter` (header names are lower-case in Node). */
export function providerHeader(primitive: PrimitiveName): string {
  return `x-provider-${primitive.replace(/_/g, '-')}`;
}
