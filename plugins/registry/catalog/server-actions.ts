import type { FastifyRequest } from 'fastify';
import type { Catalog } from './context.ts';
import { badRequest, SwitchboardError } from '../../../core/errors.ts';
import type { UserContext } from '../auth/context.ts';
import { requireCan, requireCredentialRight, requireUser, serverVisible } from './access.ts';
import { touchesCredential } from './credentials.ts';
import type { ServerRecord } from './records.ts';
import { parseBool, parseServerFields, type ServerBodyT, type ServerFields } from './server-input.ts';
import type { RegisterOptions } from './servers.ts';

/** The registration and lookup steps every endpoint family shares (programmatic, UI, internal, older unprefixed). */

/** Names that would be shadowed by fixed routes under /api/servers/. */
const RESERVED = new Set(['health', 'register', 'toggle', 'groups', 'all']);

export function checkRegistrablePath(path: string): void {
  const name = path.slice(1);
  if (name.includes('/'))
    throw badRequest('SB_ERR_REGISTRY_INVALID_PATH', `Server paths are one segment, e.g. /weather (got ${path})`);
  if (RESERVED.has(name))
    throw badRequest('SB_ERR_REGISTRY_INVALID_PATH', `${path} is reserved by the registry API; choose another path`);
}

export async function registerServer(
  catalog: Catalog,
  user: UserContext,
  body: ServerBodyT,
  opts: RegisterOptions & { checkPermission?: boolean },
): Promise<{ record: ServerRecord; created: boolean; scan?: Record<string, unknown> }> {
  const fields = parseServerFields(body, ['name', 'description', 'path', 'proxy_pass_url']);
  const path = fields.path!;
  checkRegistrablePath(path);
  if (opts.checkPermission !== false) {
    requireCan(user, 'register_service', path);
    if (touchesCredential(body)) requireCredentialRight(user, path);
  }
  await refuseBlockedBackends(catalog, fields);
  const { record, created, scan } = await catalog.servers.register(
    { ...fields, path, server_name: fields.server_name!, proxy_pass_url: fields.proxy_pass_url! },
    body,
    user,
    { ...opts, setAsDefault: opts.setAsDefault ?? parseBool(body.set_as_default, 'set_as_default') },
  );
  return { record, created, scan: scan.summary };
}

const BACKEND_URL_FIELDS = ['proxy_pass_url', 'mcp_endpoint', 'sse_endpoint'] as const;

/**
 * Registration-time SSRF guard (every register, update and edit endpoint):
 * a backend at a link-local or cloud-metadata address is refused with 400
 * unless `registry.allow_link_local_backends` is true. The health checker and
 * the gateway judge the address again at use time (a name can be re-pointed);
 * this check makes the mistake visible to whoever registers it.
 */
export async function refuseBlockedBackends(
  catalog: Catalog,
  fields: Pick<ServerFields, (typeof BACKEND_URL_FIELDS)[number]>,
): Promise<void> {
  for (const field of BACKEND_URL_FIELDS) {
    const url = fields[field];
    if (!url) continue;
    const cls = await catalog.guard.blocked(url);
    if (cls) {
      throw badRequest(
        'SB_ERR_REGISTRY_BLOCKED_ADDRESS',
        `${field} ${url} reaches a ${cls} address, which the registry refuses as a backend (it could expose cloud credentials); ` +
          'give the backend address the registry should call instead, or set registry.allow_link_local_backends: true in the config if the backend really lives there',
      );
    }
  }
}

export function registrationSummary(record: ServerRecord, created: boolean, scan?: Record<string, unknown>) {
  return {
    message: created ? `Service ${record.path} registered` : `Service ${record.path} updated`,
    path: record.path,
    server_name: record.server_name,
    name: record.server_name,
    version: record.version,
    is_enabled: record.is_enabled,
    health_status: record.health_status,
    auth_scheme: record.auth_scheme,
    auth_header_name: record.auth_header_name ?? null,
    auth_credential_encrypted: record.auth_credential_encrypted,
    tags: record.tags,
    security_scan: scan,
  };
}

/** `/api/servers/:server` and friends: the path param is the server path without its leading slash. */
export function pathParam(raw: string): string {
  const p = `/${decodedOnce(raw).replace(/^\/+|\/+$/g, '')}`;
  return p;
}

/**
 * The router has decoded the parameter already; clients that encode a server path twice are still
 * read. A '%' that starts no valid escape is kept as it is (no server path holds one, so the lookup
 * answers 404) instead of a URIError's 500 (found by test/fuzz/routes.test.ts).
 */
export function decodedOnce(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The server, when it exists and the caller may see it (403 otherwise; 404 when absent). */
export function visibleServer(catalog: Catalog, user: UserContext, path: string): ServerRecord {
  const s = catalog.servers.require(path);
  if (!serverVisible(user, s))
    throw new SwitchboardError(403, 'SB_ERR_REGISTRY_FORBIDDEN', `You do not have access to ${path}`);
  return s;
}

export function currentUser(request: FastifyRequest): UserContext {
  return requireUser(request);
}
