import { isPublicPath } from '../registry/auth/resource-binding.ts';

/**
 * The credentials each surface accepts, as OpenAPI security schemes. Which
 * scheme applies follows from where a route lives (its path), the same way the
 * auth hooks are scoped, so no route has to repeat it.
 */
export const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A registry token (POST /api/tokens/generate, or an IdP access token) or, on /api/v1, a platform token of the configured auth backend.',
  },
  basic: {
    type: 'http',
    scheme: 'basic',
    description: 'The local registry admin (username and password from the admin password file).',
  },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: 'mcp_gateway_session',
    description:
      'The browser session set by /login. On /api/v1 it is accepted when the request sends no bearer token or API key (and the process runs the registry). Unsafe methods also need the X-CSRF-Token header (GET /api/auth/csrf); this page sends it for you.',
  },
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'A platform API key (POST /api/v1/identity/api-key or the auth backend config).',
  },
  xAuthorization: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Authorization',
    description: 'The gateway token header an edge proxy forwards: the value is `Bearer <token>`.',
  },
} as const;

export type SchemeName = keyof typeof SECURITY_SCHEMES;
/** OpenAPI security requirement: a list of alternatives, each naming schemes used together. */
export type SecurityRequirement = Array<Partial<Record<SchemeName, string[]>>>;

const anyOf = (...names: SchemeName[]): SecurityRequirement => names.map((n) => ({ [n]: [] }));

/** Answer the same with or without credentials: ops, discovery documents, the login flow, the signed live viewer. */
const PUBLIC_EXACT = new Set([
  '/',
  '/healthz',
  '/readyz',
  '/metrics',
  '/openapi.json',
  '/auth/config',
  '/logout',
  '/api/auth/logout',
]);
const PUBLIC_PREFIXES = ['/.well-known/', '/docs', '/api/v1/browser/live/'];

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** The security requirement of an operation at `path` (an OpenAPI path template). */
export function securityFor(path: string): SecurityRequirement {
  if (PUBLIC_EXACT.has(path) || PUBLIC_PREFIXES.some((p) => path.startsWith(p)) || isPublicPath(path)) return [];
  // The console's registry session cookie stands in when the auth backend finds no credential of its own
  // (plugins/platform/session-principal.ts), so it is a third alternative on the platform surface.
  if (under(path, '/api/v1')) return anyOf('bearer', 'apiKey', 'session');
  // /validate is asked by an edge proxy on behalf of the original request, which carries X-Authorization.
  if (path === '/validate') return anyOf('xAuthorization', 'bearer', 'session');
  // The MCP gateway (/{server}/mcp, /sse, /messages) reads X-Authorization first, then Authorization.
  if (/^\/\{[^}]+\}\/(mcp|sse|messages)$/.test(path)) return anyOf('xAuthorization', 'bearer');
  // The internal admin endpoints take the local admin's Basic credentials or an admin's console session, no bearer.
  if (under(path, '/api/internal')) return anyOf('basic', 'session');
  return anyOf('bearer', 'basic', 'session');
}
