import type { FastifyInstance } from 'fastify';
import { registryAuthOf } from '../../plugins/registry/auth/index.ts';
import { mintSelfToken, type ResourceType } from '../../plugins/registry/auth/self-tokens.ts';
import { SESSION_COOKIE, csrfTokenFor, signSession } from '../../plugins/registry/auth/session.ts';

/**
 * Credentials for registry tests. All of them go through the real auth plugin
 * (real HS256 tokens signed with the app's SECRET_KEY, real Basic checks).
 */

/** HTTP Basic headers for the local admin (what /api/internal/* needs). */
export function adminBasic(app: FastifyInstance): Record<string, string> {
  const { username, password } = registryAuthOf(app).authenticator.admin;
  return { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` };
}

export interface MintOptions {
  username: string;
  /** IdP-style groups carried in the token (informational for self-signed tokens). */
  groups?: string[];
  /** Scope names the token grants; default: the scopes the groups map to, else `mcp-registry-user`. */
  scopes?: string[];
  expiresInSeconds?: number;
  resource?: { type: ResourceType; id: string };
}

/** A self-signed bearer token string (no `Bearer ` prefix). */
export async function mintToken(app: FastifyInstance, opts: MintOptions): Promise<string> {
  const groups = opts.groups ?? [];
  const mapped = registryAuthOf(app).scopes.scopesForGroups(groups);
  const scopes = opts.scopes ?? (mapped.length ? mapped : ['mcp-registry-user']);
  return mintSelfToken(registryAuthOf(app).authenticator.secretKey, {
    username: opts.username,
    groups,
    scopes,
    expiresInSeconds: opts.expiresInSeconds ?? 3600,
    resource: opts.resource,
  });
}

/** Authorization headers for a user holding exactly `scopes` (e.g. ['mcp-registry-admin']). */
export async function asUser(
  app: FastifyInstance,
  scopes: string[],
  username = 'test-user',
): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await mintToken(app, { username, scopes })}` };
}

/** A temporary scope document for one test (removed by the caller's teardown). */
export async function withScope(
  app: FastifyInstance,
  doc: { _id: string; group_mappings?: string[]; server_access?: unknown[]; ui_permissions?: Record<string, string[]> },
): Promise<void> {
  await registryAuthOf(app).scopes.put({
    _id: doc._id,
    group_mappings: doc.group_mappings ?? [],
    server_access: (doc.server_access ?? []) as never,
    ui_permissions: doc.ui_permissions ?? {},
  });
}

/**
 * A browser session of the local admin: the `cookie` header value and the CSRF
 * token that unsafe cookie-authenticated requests must echo in X-CSRF-Token
 * (or the csrf_token form field).
 */
export async function adminSession(
  app: FastifyInstance,
): Promise<{ cookie: string; csrf: string; headers: Record<string, string> }> {
  const { username, password } = registryAuthOf(app).authenticator.admin;
  const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
  if (res.statusCode !== 302) throw new Error(`admin login failed: ${res.statusCode} ${res.body}`);
  const raw = res.headers['set-cookie'];
  const list = Array.isArray(raw) ? raw : [String(raw)];
  const pairs = list.map((c) => c.split(';')[0]);
  const cookie = pairs.join('; ');
  const csrf = decodeURIComponent(
    pairs.find((p) => p.startsWith('mcp_gateway_csrf='))!.slice('mcp_gateway_csrf='.length),
  );
  return { cookie, csrf, headers: { cookie, 'x-csrf-token': csrf } };
}

/**
 * A browser session of any user, signed with the app's key as the login flow signs it (for users the local
 * login cannot make, e.g. an IdP user who is not an admin): the same shape as adminSession.
 */
export function userSession(
  app: FastifyInstance,
  user: { username: string; groups?: string[]; scopes?: string[]; provider?: string },
): { cookie: string; csrf: string; headers: Record<string, string> } {
  const key = registryAuthOf(app).authenticator.secretKey;
  const { value, payload } = signSession(
    key,
    {
      username: user.username,
      groups: user.groups ?? [],
      scopes: user.scopes ?? ['mcp-registry-user'],
      provider: user.provider ?? 'oidc',
    },
    1,
  );
  const cookie = `${SESSION_COOKIE}=${encodeURIComponent(value)}`;
  const csrf = csrfTokenFor(key, payload.sid);
  return { cookie, csrf, headers: { cookie, 'x-csrf-token': csrf } };
}
