import type { Principal } from '../../../../../core/primitives/auth.ts';
import type { AgentSpec } from '../../schemas.ts';

/**
 * The agent's own memory namespace: `primitives.memory.namespace` with
 * `{agent_name}` expanded, and `{user_id}` as the caller, so `user:{user_id}`
 * gives each user a private memory the memory routes guard.
 */
export function agentNamespace(spec: AgentSpec, userId: string): string {
  const template = spec.primitives.memory?.namespace ?? 'agent:{agent_name}';
  return template.replaceAll('{agent_name}', spec.name).replaceAll('{user_id}', userId);
}

/** Shared pools: the top-level `shared_namespaces` plus any listed under primitives.memory. */
export function sharedNamespaces(spec: AgentSpec): string[] {
  const all = [...(spec.shared_namespaces ?? []), ...(spec.primitives.memory?.shared_namespaces ?? [])];
  return [...new Set(all.map((n) => n.replaceAll('{agent_name}', spec.name)))];
}

/**
 * `user:<id>` namespaces are private to that user (as on the memory routes): an
 * agent shared with others must not read or write its author's private memory.
 */
export function assertNamespaceAccess(ns: string, who: Principal): void {
  const owner = /^user:([^:]+)(?::|$)/.exec(ns)?.[1];
  if (owner !== undefined && owner !== who.id && !who.is_admin)
    throw new Error(`namespace '${ns}' belongs to user '${owner}'`);
}

export function memoryEnabled(spec: AgentSpec): boolean {
  return spec.primitives.memory?.enabled === true;
}

export function str(input: Record<string, unknown>, key: string, required = true): string | undefined {
  const v = input[key];
  if (v === undefined || v === null || v === '') {
    if (required) throw new Error(`missing required argument '${key}'`);
    return undefined;
  }
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function int(input: Record<string, unknown>, key: string, fallback: number, max: number): number {
  const v = Number(input[key] ?? fallback);
  return Number.isFinite(v) ? Math.max(1, Math.min(max, Math.floor(v))) : fallback;
}
