import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';
import type { Principal } from './auth.ts';
import { SwitchboardError } from '../errors.ts';

const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** Spec 2.5. The name is used in URLs, so it is limited to URL-safe characters. */
export const Tool = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.-]+$' }),
  description: Type.String({ default: '' }),
  input_schema: Type.Object(
    {},
    { additionalProperties: true, default: { type: 'object' }, description: 'JSON Schema of the invoke params' },
  ),
});
export type Tool = Static<typeof Tool>;

export const ToolList = Type.Object({ tools: Type.Array(Tool), total: Type.Integer() });
export type ToolList = Static<typeof ToolList>;

export const ToolSearchQuery = Type.Object({
  // The registry's own search takes at most 512 characters (plugins/registry/discovery/routes.ts).
  query: Type.String({ minLength: 1, maxLength: 512 }),
  max_results: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
});
export type ToolSearchQuery = Static<typeof ToolSearchQuery>;

export const ToolMatch = Type.Object({ tool: Tool, score: Type.Number() });
/** A match as the reference client reads it: the tool's fields at the top, its schema also under `parameters`. */
export const ToolSearchHit = Type.Object({
  name: Type.String(),
  description: Type.String(),
  input_schema: Type.Object({}, { additionalProperties: true }),
  parameters: Type.Object({}, { additionalProperties: true }),
  score: Type.Number(),
});
/** `matches` is the spec's answer; `tools` carries the same hits in the reference's shape, so its client sees them. */
export const ToolSearchResult = Type.Object({
  query: Type.String(),
  matches: Type.Array(ToolMatch),
  tools: Type.Array(ToolSearchHit),
});
export type ToolMatch = Static<typeof ToolMatch>;

export const InvokeRequest = Type.Object({ params: Type.Optional(JsonObject) });
export type InvokeRequest = Static<typeof InvokeRequest>;

export const InvokeResult = Type.Object({
  tool_name: Type.String(),
  result: Type.Unknown(),
  status: Type.Union([Type.Literal('success'), Type.Literal('error')]),
});
export type InvokeResult = Static<typeof InvokeResult>;

export const ServerHealth = Type.Union([Type.Literal('healthy'), Type.Literal('unhealthy'), Type.Literal('unknown')]);

export const McpServer = Type.Object({
  name: Type.String(),
  url: Type.String(),
  config: JsonObject,
  health: ServerHealth,
});
export type McpServer = Static<typeof McpServer>;

export const RegisterServerRequest = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.-]+$' }),
  url: Type.String({ minLength: 1, format: 'uri' }),
  config: Type.Optional(JsonObject),
});
export type RegisterServerRequest = Static<typeof RegisterServerRequest>;

export const ServerList = Type.Object({ servers: Type.Array(McpServer) });

export interface ToolsCapabilities {
  /** Register and delete tools. */
  register: boolean;
  /** List, get and search tools. */
  search: boolean;
  invoke: boolean;
  /** MCP server management. */
  servers: boolean;
  [k: string]: boolean | string | readonly string[];
}

/** Thrown by a provider when the tool ran and failed (spec: 502). */
export class ToolExecutionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolExecutionError';
  }
}

/**
 * Who asks, for backends with access rules of their own (the registry applies
 * its scopes to the caller): the platform principal and the request headers,
 * from which such a backend reads its own credential. Providers without
 * access rules ignore it.
 */
export interface ToolCaller {
  principal?: Principal;
  headers: Record<string, string | string[] | undefined>;
}

/** The backend refused this caller (its own scopes or permissions): a 403 wherever it surfaces. */
export class ToolAccessDenied extends SwitchboardError {
  constructor(detail: string) {
    super(403, 'SB_ERR_TOOLS_DENIED', detail);
  }
}

/** The tool did not answer in time: a 504 wherever it surfaces. */
export class ToolTimeoutError extends SwitchboardError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(504, 'SB_ERR_TOOLS_TIMEOUT', detail, options);
  }
}

/**
 * The tools primitive. Params are validated against the tool's input_schema by
 * the plugin before `invoke` is called, so providers receive checked input.
 */
export interface ToolsProvider extends ProviderBase {
  readonly kind: 'tools';
  readonly capabilities: ToolsCapabilities;
  register(tool: Tool): Promise<Tool>;
  list(caller?: ToolCaller): Promise<Tool[]>;
  get(name: string, caller?: ToolCaller): Promise<Tool | undefined>;
  search(query: string, maxResults: number, caller?: ToolCaller): Promise<ToolMatch[]>;
  delete(name: string, caller?: ToolCaller): Promise<boolean>;
  invoke(name: string, params: Record<string, unknown>, caller?: ToolCaller): Promise<InvokeResult>;
  listServers(caller?: ToolCaller): Promise<McpServer[]>;
  registerServer(req: RegisterServerRequest, caller?: ToolCaller): Promise<McpServer>;
  getServer(name: string, caller?: ToolCaller): Promise<McpServer | undefined>;
}
