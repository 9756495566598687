import type { PrimitiveName } from '../../../../core/primitives.ts';
import type { Principal } from '../../../../core/primitives/auth.ts';
import type { ProviderBase } from '../../../../core/provider.ts';
import type { AgentSpec } from '../schemas.ts';
import type { Emit } from './events.ts';
import type { AgentSpecs } from './spec-store.ts';

/** The keys of GET /tool-catalog (spec 4.1), in order. */
export const CATALOG_KEYS = [
  'memory',
  'code_interpreter',
  'browser',
  'tools',
  'identity',
  'shared_memory',
  'task_board',
  'agent_management',
  'agents',
] as const;
export type CatalogKey = (typeof CATALOG_KEYS)[number];

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** What a tool sees while it runs: where to report progress, and when to stop. */
export interface ToolCallEnv {
  emit: Emit;
  signal: AbortSignal;
}

/** A tool ready to run for one agent and caller. Its result goes back to the model as text. */
export interface BoundTool extends ToolSpec {
  primitive: string;
  provider: string;
  run(input: Record<string, unknown>, call: ToolCallEnv): Promise<string>;
}

/** What a tool group needs to bind its tools for one agent run. */
export interface BindEnv {
  agent: AgentSpec;
  principal: Principal;
  /** Delegation depth of this agent: 0 for the agent the caller talks to. */
  depth: number;
  specs: AgentSpecs;
  /** Provider routing: X-Provider headers > the agent's provider_overrides > the default. */
  resolve<P extends ProviderBase>(primitive: PrimitiveName): P;
  /** Remove operator-denied top-level metadata keys (spec 4.8) before a tool returns records. */
  stripMetadata(primitive: string, metadata: Record<string, unknown>): Record<string, unknown>;
  /** Register cleanup for the end of the run (e.g. close a session a tool opened lazily). */
  defer(fn: () => Promise<unknown>): void;
  /** Run another agent as a tool; returns its final answer. */
  runSubAgent(name: string, message: string, call: ToolCallEnv): Promise<string>;
}

/**
 * A primitive's contribution to the catalog. A primitive that gains agent
 * tools adds a file under runtime/tools/ and registers one group: nothing in
 * the loop or the routes changes.
 */
export interface ToolGroup {
  key: CatalogKey;
  /** The primitive whose provider executes the tools (reported by GET /{name}/tools). */
  primitive: string;
  /** Definitions for GET /tool-catalog; dynamic groups (agents) depend on the caller. */
  catalog(env: { principal: Principal; specs: AgentSpecs }): Promise<ToolSpec[]>;
  /** The tools this agent gets; [] when the agent does not enable the primitive. */
  bind(env: BindEnv): Promise<BoundTool[]>;
}

const groups = new Map<CatalogKey, ToolGroup>();

export function registerToolGroup(group: ToolGroup): void {
  groups.set(group.key, group);
}

export async function catalogListing(env: {
  principal: Principal;
  specs: AgentSpecs;
}): Promise<Record<CatalogKey, ToolSpec[]>> {
  const entries = await Promise.all(
    CATALOG_KEYS.map(async (k) => [k, (await groups.get(k)?.catalog(env)) ?? []] as const),
  );
  return Object.fromEntries(entries) as Record<CatalogKey, ToolSpec[]>;
}

/** Every tool the agent gets, in catalog order; a name offered twice is kept once (first wins). */
export async function bindTools(env: BindEnv): Promise<BoundTool[]> {
  const bound = await Promise.all(CATALOG_KEYS.map((k) => groups.get(k)?.bind(env) ?? Promise.resolve([])));
  const seen = new Set<string>();
  return bound.flat().filter((t) => {
    if (seen.has(t.name)) return false;
    seen.add(t.name);
    return true;
  });
}

/** Honour `primitives.<p>.tools` when the agent narrows a primitive's tool list. */
export function pickTools<T extends { name: string }>(all: T[], wanted: string[] | undefined): T[] {
  return wanted ? all.filter((t) => wanted.includes(t.name)) : all;
}
