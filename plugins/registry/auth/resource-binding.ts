import { badRequest } from '../../../core/errors.ts';
import type { UserContext } from './context.ts';
import { normalizePath, routedRequestPath } from './paths.ts';

/**
 * Resource binding of tokens (spec 4.4 rules 4-6): how ids are normalised and
 * which request paths a bound token may reach.
 */

/** Trim slashes; refuse `..`, percent-encoding and control characters (400). */
export function normalizeResourceId(id: string): string {
  if (id.includes('..')) throw badRequest('SB_ERR_TOKEN_RESOURCE_ID', "resource.id must not contain '..'");
  // Any '%' at all: a lone one is either an encoding mistake or an attempt to smuggle one past this check.
  if (id.includes('%')) throw badRequest('SB_ERR_TOKEN_RESOURCE_ID', 'resource.id must not contain percent-encoding');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(id))
    throw badRequest('SB_ERR_TOKEN_RESOURCE_ID', 'resource.id must not contain control characters');
  const trimmed = id.replace(/^\/+|\/+$/g, '');
  if (!trimmed)
    throw badRequest(
      'SB_ERR_TOKEN_RESOURCE_ID',
      'resource.id must name a resource (it is empty after trimming slashes)',
    );
  if (/\s/.test(trimmed) || trimmed.includes('//') || trimmed.includes('\\')) {
    throw badRequest(
      'SB_ERR_TOKEN_RESOURCE_ID',
      'resource.id must be a path or slug without whitespace, backslashes or empty segments',
    );
  }
  return trimmed;
}

/**
 * Families a bound token can never reach, whatever its resource: token
 * minting, admin, search, federation, config, peers, registry and auth
 * (except /api/auth/me, for introspection).
 */
const FORBIDDEN_FAMILIES = [
  '/api/tokens',
  '/tokens',
  '/api/admin',
  '/api/internal',
  '/api/search',
  '/api/federation',
  '/api/config',
  '/api/peers',
  '/api/registry',
  '/v0',
  '/v0.1',
  '/api/scopes',
  '/api/debug',
  '/api/auth',
  '/auth',
  '/login',
  '/logout',
  '/oauth2',
];

/**
 * Endpoints the spec marks public (4.8 and 5.4: well-known, login, providers
 * list, health; the older login pages of 4.9). They answer the same with or
 * without credentials, so a bound token there is ignored, not refused:
 * refusing protects nothing (the holder can drop the header) and breaks
 * clients that attach their token to every call, e.g. an MCP client reading
 * /.well-known/mcp-servers. Rule 6 limits what a bound token can authorise;
 * these endpoints authorise nothing.
 */
const PUBLIC_PATHS = new Set([
  '/.well-known/mcp-servers',
  '/health',
  '/api/auth/providers',
  '/api/auth/login',
  '/login',
]);
const PUBLIC_PREFIXES = ['/api/auth/auth/', '/auth/'];

export function isPublicPath(path: string): boolean {
  return PUBLIC_PATHS.has(path) || PUBLIC_PREFIXES.some((p) => path.startsWith(p));
}

const MCP_SUFFIX = /\/(mcp|sse|messages)(\/.*)?$/;

function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The registry's own paths outside /api (discovery, login pages, the older
 * unprefixed family, ops). Without an MCP suffix they address the registry,
 * not an MCP server: /validate must not judge `/v0/servers` as a server named
 * "v0/servers" (a user limited to one server would be refused the catalog).
 */
const REGISTRY_PATHS = [
  '/v0',
  '/v0.1',
  '/.well-known',
  '/health',
  '/healthz',
  '/readyz',
  '/metrics',
  '/docs',
  '/openapi.json',
  '/validate',
  '/login',
  '/logout',
  '/register',
  '/toggle',
  '/edit',
  '/refresh',
  '/auth',
  '/ws',
];

/** The server an MCP path addresses: the path without its /mcp, /sse or /messages suffix. */
export function serverNameOf(path: string): string | undefined {
  if (path.startsWith('/api/') || path === '/api') return undefined;
  const m = MCP_SUFFIX.exec(path);
  if (!m && REGISTRY_PATHS.some((p) => underPrefix(path, p))) return undefined;
  const base = normalizePath(m ? path.slice(0, m.index) : path);
  return base || undefined;
}

/** `/api/<family>/<id...>` paths that address one resource of a type. */
const RESOURCE_ROUTES: Array<{ prefixes: string[]; types: Array<NonNullable<UserContext['resource']>['type']> }> = [
  {
    prefixes: ['/api/servers', '/api/server_details', '/api/tools', '/api/toggle', '/api/edit', '/api/refresh'],
    types: ['server', 'virtual_server'],
  },
  { prefixes: ['/api/virtual-servers', '/api/virtual_servers'], types: ['virtual_server'] },
  { prefixes: ['/api/agents'], types: ['agent'] },
  { prefixes: ['/api/skills'], types: ['skill'] },
];

/** The older unprefixed family's per-server routes (spec 4.9): `/toggle/<server>`, `/edit/<server>`, `/refresh/<server>`. */
const LEGACY_SERVER_ROUTES = ['/toggle', '/edit', '/refresh'];

/** Skill ids may name the skill (`pdf-tools`) or its path (`skills/pdf-tools`); both bind the same skill. */
export function resourceKey(type: NonNullable<UserContext['resource']>['type'], id: string): string {
  const n = id.replace(/^\/+|\/+$/g, '');
  return type === 'skill' ? n.replace(/^skills\//, '') : n;
}

function addresses(type: NonNullable<UserContext['resource']>['type'], rest: string, id: string): boolean {
  const r = resourceKey(type, rest);
  const want = resourceKey(type, id);
  return r === want || r.startsWith(`${want}/`);
}

/**
 * May a token bound to `resource` be used on `path` (no query string)? Only
 * paths addressing that very resource, /api/auth/me, and public endpoints
 * (where the token is ignored).
 */
export function boundPathAllowed(resource: NonNullable<UserContext['resource']>, path: string): boolean {
  if (path === '/api/auth/me' || isPublicPath(path)) return true;
  if (FORBIDDEN_FAMILIES.some((p) => underPrefix(path, p))) return false;
  const id = resource.id;
  if (path.startsWith('/api/')) {
    for (const r of RESOURCE_ROUTES) {
      for (const prefix of r.prefixes) {
        if (!underPrefix(path, prefix)) continue;
        if (!r.types.includes(resource.type)) return false;
        return addresses(resource.type, path.slice(prefix.length).replace(/^\/+/, ''), id);
      }
    }
    return false;
  }
  if (resource.type !== 'server' && resource.type !== 'virtual_server') return false;
  for (const prefix of LEGACY_SERVER_ROUTES) {
    if (path.startsWith(`${prefix}/`)) return addresses(resource.type, path.slice(prefix.length + 1), id);
  }
  return serverNameOf(path) === id;
}

/**
 * Why a token bound to `resource` is refused on a request this server routes
 * itself (`rawPath` as it came, without the query), or undefined when it may
 * go on. The path is judged after the normalisation /validate applies
 * (routedRequestPath, paths.ts), and a path the router could read differently
 * from that judgement is refused, so no spelling of a path reaches another
 * resource than the one the check saw.
 */
export function boundRequestRefusal(
  resource: NonNullable<UserContext['resource']>,
  rawPath: string,
): string | undefined {
  const path = routedRequestPath(rawPath);
  if (path === undefined)
    return `This token is bound to ${resource.type} '${resource.id}'; the path ${rawPath} has a dot segment (plain or percent-encoded), a backslash, an empty segment or an encoded slash next to a dot, which could address another resource than it seems to; send the path with plain slashes and without dot segments`;
  if (boundPathAllowed(resource, path)) return undefined;
  return `This token is bound to ${resource.type} '${resource.id}' and cannot be used on ${path}; use a token without a resource binding`;
}
