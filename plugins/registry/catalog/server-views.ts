import { Type } from '@sinclair/typebox';
import { mask } from '../../platform/credentials/attributes.ts';
import type { ServerRecord } from './records.ts';

/**
 * What leaves the process about a server. The response schemas list every
 * field explicitly: fast-json-stringify drops anything else, so the stored
 * ciphertext cannot leak even if a handler passes the whole record.
 */

const Tool = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  inputSchema: Type.Optional(Type.Object({}, { additionalProperties: true })),
});
export const ToolSchema = Tool;

export const ServerSummary = Type.Object({
  path: Type.String(),
  name: Type.String(),
  server_name: Type.String(),
  description: Type.String(),
  is_enabled: Type.Boolean(),
  health_status: Type.String(),
  num_tools: Type.Integer(),
  tags: Type.Array(Type.String()),
  status: Type.String(),
});

const Version = Type.Object({
  version: Type.String(),
  status: Type.String(),
  registered_at: Type.String(),
  is_latest: Type.Boolean(),
});

export const ServerDetail = Type.Object({
  id: Type.String(),
  path: Type.String(),
  name: Type.String(),
  server_name: Type.String(),
  description: Type.String(),
  proxy_pass_url: Type.Optional(Type.String({ description: 'Omitted for non-admins in gateway deployment mode' })),
  tags: Type.Array(Type.String()),
  num_tools: Type.Integer(),
  num_stars: Type.Number(),
  is_python: Type.Boolean(),
  license: Type.String(),
  metadata: Type.Object({}, { additionalProperties: true }),
  auth_scheme: Type.String(),
  auth_header_name: Type.Optional(Type.String()),
  auth_credential_encrypted: Type.Boolean(),
  supported_transports: Type.Array(Type.String()),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  mcp_endpoint: Type.Optional(Type.String()),
  sse_endpoint: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  status: Type.String(),
  provider_organization: Type.Optional(Type.String()),
  provider_url: Type.Optional(Type.String()),
  is_enabled: Type.Boolean(),
  health_status: Type.String(),
  last_checked_iso: Type.Union([Type.String(), Type.Null()]),
  tools: Type.Array(Tool),
  versions: Type.Array(Version),
  groups: Type.Array(Type.String()),
  registered_by: Type.String(),
  registered_at: Type.String(),
  updated_at: Type.String(),
});

export function numTools(s: ServerRecord): number {
  return s.tools.length || s.num_tools;
}

export function serverSummary(s: ServerRecord) {
  return {
    path: s.path,
    name: s.server_name,
    server_name: s.server_name,
    description: s.description,
    is_enabled: s.is_enabled,
    health_status: s.health_status,
    num_tools: numTools(s),
    tags: s.tags,
    status: s.status,
  };
}

// Records are replaced, never mutated, on every write, so a record's JSON can be kept beside it.
const summaryJsonCache = new WeakMap<ServerRecord, string>();

/** serverSummary(s) as JSON text, computed once per stored version of the record. */
export function serverSummaryJson(s: ServerRecord): string {
  let json = summaryJsonCache.get(s);
  if (json === undefined) {
    json = JSON.stringify(serverSummary(s));
    summaryJsonCache.set(s, json);
  }
  return json;
}

export function versionsOf(s: ServerRecord) {
  const last = s.versions.length - 1;
  // is_default: the version served (endpoint and fields); a newer one registered without set_as_default is only listed.
  return s.versions.map((v, i) => ({
    version: v.version,
    status: v.status,
    registered_at: v.registered_at,
    is_latest: i === last,
    is_default: v.version === s.version,
  }));
}

/** Header names with their values masked (only the last 4 characters of long values show), as credential values are. */
function maskedHeaders(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!headers) return undefined;
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, mask(v)]));
}

/** `revealHeaders`: custom header values in clear (callers who may change them, catalog/access.ts mayReadHeaders); masked otherwise. */
export function serverDetail(s: ServerRecord, opts: { showBackend: boolean; stars?: number; revealHeaders?: boolean }) {
  return {
    id: s.id,
    path: s.path,
    name: s.server_name,
    server_name: s.server_name,
    description: s.description,
    proxy_pass_url: opts.showBackend ? s.proxy_pass_url : undefined,
    tags: s.tags,
    num_tools: numTools(s),
    num_stars: opts.stars ?? s.num_stars,
    is_python: s.is_python,
    license: s.license,
    metadata: s.metadata,
    auth_scheme: s.auth_scheme,
    auth_header_name: s.auth_header_name,
    auth_credential_encrypted: s.auth_credential_encrypted,
    supported_transports: s.supported_transports,
    headers: opts.revealHeaders ? s.headers : maskedHeaders(s.headers),
    mcp_endpoint: opts.showBackend ? s.mcp_endpoint : undefined,
    sse_endpoint: opts.showBackend ? s.sse_endpoint : undefined,
    version: s.version,
    status: s.status,
    provider_organization: s.provider_organization,
    provider_url: s.provider_url,
    is_enabled: s.is_enabled,
    health_status: s.health_status,
    last_checked_iso: s.last_checked_iso,
    tools: s.tools,
    versions: versionsOf(s),
    groups: s.groups,
    registered_by: s.registered_by,
    registered_at: s.registered_at,
    updated_at: s.updated_at,
  };
}
