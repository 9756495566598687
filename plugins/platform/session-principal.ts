import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden } from '../../core/errors.ts';
import type { Principal } from '../../core/primitives/auth.ts';
import { registryAuthOf } from '../registry/auth/index.ts';
import { UNSAFE_METHODS } from '../registry/auth/csrf.ts';
import { CSRF_HEADER, csrfMatches } from '../registry/auth/session.ts';

/**
 * The web console signs in on the registry (the `mcp_gateway_session` cookie) and calls the public /api/v1
 * like any client. When the platform auth backend finds no credential of its own (api_key, jwt), a genuine,
 * unrevoked registry session is accepted as the principal `<username>`, with the session's groups and scopes
 * and the registry's admin bit. Unsafe methods must carry the session's CSRF token in `X-CSRF-Token`, exactly
 * as on the registry: a cookie is sent by the browser on forged cross-site requests too.
 *
 * Undefined (so the caller answers 401) when the registry surface does not run in this process, the request
 * also presents a credential the backend refused, or the session is missing, expired, forged or logged out.
 */
export async function sessionPrincipal(app: FastifyInstance, request: FastifyRequest): Promise<Principal | undefined> {
  let auth: ReturnType<typeof registryAuthOf>;
  try {
    auth = registryAuthOf(app);
  } catch {
    return undefined; // platform-only process: there is no registry session to trust
  }
  // A credential the backend refused stays refused: the cookie never rescues a bad key or token sent beside it.
  if (request.headers.authorization || request.headers['x-api-key']) return undefined;
  const who = await auth.authenticator.identify({ cookie: request.headers.cookie });
  if (who.source !== 'cookie' || !who.session || !who.user) return undefined;
  if (UNSAFE_METHODS.has(request.method)) {
    const presented = request.headers[CSRF_HEADER];
    if (
      !csrfMatches(auth.authenticator.secretKey, who.session.sid, typeof presented === 'string' ? presented : undefined)
    )
      throw forbidden(
        'SB_ERR_AUTH_CSRF',
        `Missing or invalid CSRF token: a request signed in by the session cookie must send the token from GET /api/auth/csrf in the ${CSRF_HEADER} header`,
      );
  }
  return {
    id: who.user.username,
    type: 'user',
    is_admin: who.user.is_admin,
    groups: [...who.user.groups],
    scopes: [...who.user.scopes],
  };
}
