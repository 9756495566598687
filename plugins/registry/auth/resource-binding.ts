import { badRequest } from '../../../core/errors.ts';
import type { UserContext } from './context.ts';

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
  if (/[\u0000-\u001f\u007f-\u009f]/.test(id)) throw badRequest('SB_ERR_TOKEN_RESOURCE_ID', 'resource.id must not contain control characters');
  const trimmed = id.replace(/^\/+|\/+$/g, '');
  if (!trimmed) throw badRequest('SB_ERR_TOKEN_RESOURCE_ID', 'resource.id must name a resource (it is empty after trimming slashes)');
  if (/\s/.test(trimmed) || trimmed.includes('//') || trimmed.includes('\\')) {
    throw badRequest('SB_ERR_TOKEN_RESOURCE_ID', 'resource.id must be a path or slug without whitespace, backslashes or empty segments');
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
  '/api/scopes',
  '/api/debug',
  '/api/auth',
  '/auth',
  '/login',
  '/logout',
  '/oauth2',
  '/.well-known/mcp-servers',
];

const MCP_SUFFIX = /\/(mcp|sse|messages)(\/.*)?$/;

function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** The server an MCP path addresses: the path without its /mcp, /sse or /messages suffix. */
export function serverNameOf(path: string): string | undefined {
  if (path.startsWith('/api/') || path === '/api') return undefined;
  const m = MCP_SUFFIX.exec(path);
  const base = (m ? path.slice(0, m.index) : path).replace(/^\/+|\/+$/g, '');
  return base || undefined;
}

/** `/api/<family>/<id...>` paths that address one resource of a type. */
const RESOURCE_ROUTES: Array<{ prefixes: string[]; types: Array<NonNullable<UserContext['resource']>['type']> }> = [
  { prefixes: ['/api/servers', '/api/server_details', '/api/tools', '/api/toggle', '/api/edit', '/api/refresh'], types: ['server', 'virtual_server'] },
  { prefixes: ['/api/virtual-servers', '/api/virtual_servers'], types: ['virtual_server'] },
  { prefixes: ['/api/agents'], types: ['agent'] },
  { prefixes: ['/api/skills'], types: ['skill'] },
];

/**
 * May a token bound to `resource` be used on `path` (no query string)? Only
 * paths addressing that very resource, and /api/auth/me.
 */
export function boundPathAllowed(resource: NonNullable<UserContext['resource']>, path: string): boolean {
  if (path === '/api/auth/me') return true;
  if (FORBIDDEN_FAMILIES.some((p) => underPrefix(path, p))) return false;
  const id = resource.id;
  if (path.startsWith('/api/')) {
    for (const r of RESOURCE_ROUTES) {
      for (const prefix of r.prefixes) {
        if (!underPrefix(path, prefix)) continue;
        if (!r.types.includes(resource.type)) return false;
        const rest = path.slice(prefix.length).replace(/^\/+/, '');
        return rest === id || rest.startsWith(`${id}/`);
      }
    }
    return false;
  }
  if (resource.type !== 'server' && resource.type !== 'virtual_server') return false;
  return serverNameOf(path) === id;
}
