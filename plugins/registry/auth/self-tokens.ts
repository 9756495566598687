import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { UserContext } from './context.ts';

export const SELF_ISSUER = 'mcp-auth-server';
export const SELF_AUDIENCE = 'mcp-registry';

export type ResourceType = NonNullable<UserContext['resource']>['type'];

export interface MintInput {
  username: string;
  groups: string[];
  scopes: string[];
  expiresInSeconds: number;
  resource?: { type: ResourceType; id: string };
  description?: string;
}

/** Self-signed access token (HS256, SECRET_KEY) with the claims the reference's edge reads. */
export async function mintSelfToken(key: Uint8Array, input: MintInput): Promise<string> {
  const claims: Record<string, unknown> = {
    preferred_username: input.username,
    groups: input.groups,
    scope: input.scopes.join(' '),
    token_use: 'access',
    token_kind: input.resource ? 'resource' : 'user',
  };
  if (input.resource) {
    claims.resource_type = input.resource.type;
    claims.resource_id = input.resource.id;
  }
  if (input.description) claims.description = input.description;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(SELF_ISSUER)
    .setAudience(SELF_AUDIENCE)
    .setSubject(input.username)
    .setIssuedAt(now)
    .setExpirationTime(now + input.expiresInSeconds)
    .sign(key);
}

/**
 * Who a verified token names: the identity part of a UserContext (its grants are worked out from the scopes
 * later). `scopes` are the names granted by the token itself (self-signed) or by group mappings (IdP).
 */
export interface VerifiedIdentity
  extends Pick<
    UserContext,
    'username' | 'client_id' | 'groups' | 'scopes' | 'auth_method' | 'provider' | 'token_kind' | 'resource'
  > {
  /** ms since epoch; the cache keeps the identity until then. */
  expiresAt: number;
}

/** Thrown with the 401 detail the caller sees. */
export class TokenRejected extends Error {}

const RESOURCE_TYPES = new Set(['server', 'virtual_server', 'agent', 'skill']);

export async function verifySelfToken(key: Uint8Array, token: string): Promise<VerifiedIdentity> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key, {
      issuer: SELF_ISSUER,
      audience: SELF_AUDIENCE,
      algorithms: ['HS256'],
    }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired)
      throw new TokenRejected('Token has expired; mint a new one at POST /api/tokens/generate');
    throw new TokenRejected('Invalid token: signature, issuer or audience check failed');
  }
  const kind = payload.token_kind;
  if (kind !== 'user' && kind !== 'resource') {
    throw new TokenRejected(
      'Token was issued before token_kind existed and is no longer accepted; mint a new one at POST /api/tokens/generate',
    );
  }
  const username = String(payload.preferred_username ?? payload.sub ?? '');
  if (!username) throw new TokenRejected('Invalid token: no subject');
  const groups = Array.isArray(payload.groups) ? payload.groups.map(String) : [];
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
  let resource: VerifiedIdentity['resource'];
  if (kind === 'resource') {
    const type = payload.resource_type;
    const id = payload.resource_id;
    if (typeof type !== 'string' || !RESOURCE_TYPES.has(type) || typeof id !== 'string' || !id) {
      throw new TokenRejected('Invalid resource-bound token: resource_type/resource_id missing');
    }
    resource = { type: type as ResourceType, id };
  }
  return {
    username,
    groups,
    scopes,
    auth_method: 'self_signed',
    provider: 'local',
    token_kind: kind,
    resource,
    expiresAt: (payload.exp ?? 0) * 1000,
  };
}
