import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { unauthorized } from '../../core/errors.ts';
import type { AuthBackend } from '../../core/primitives/auth.ts';
import { Principal } from '../../core/primitives/auth.ts';
import { checkScopes } from './scopes.ts';
import { sessionPrincipal } from './session-principal.ts';

/**
 * Authenticates every /api/v1 request with the configured auth backend (kind
 * `auth`, default `noop`). Registered inside the /api/v1 scope, so ops routes
 * and the registry surface are untouched. Platform scopes (`<area>:read|write`)
 * carried by the credential are enforced here for every route (scopes.ts).
 */
export default fp(
  async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const backend = () => app.sb.providers.get<AuthBackend>('auth');
    const admit = (request: FastifyRequest, principal: Principal | undefined, done: (err?: Error) => void) => {
      if (!principal) return done(unauthorized('SB_ERR_AUTH_INVALID'));
      request.principal = principal;
      // A credential's scopes bound it before any route runs; its user's rights never widen them (scopes.ts).
      try {
        checkScopes(principal, request.method, request.routeOptions.url);
      } catch (err) {
        return done(err as Error);
      }
      done();
    };
    // Callback style, and no promise when the backend answers synchronously (AuthBackend.authenticate).
    app.addHook('onRequest', (request, _reply, done) => {
      const b = backend();
      if (!b) return done(unauthorized('SB_ERR_AUTH_NO_BACKEND', 'No auth backend is configured'));
      let out: ReturnType<AuthBackend['authenticate']>;
      try {
        out = b.authenticate({ headers: request.headers });
      } catch (err) {
        return done(err as Error);
      }
      // No credential the backend knows: the console's registry session cookie may stand in (session-principal.ts).
      const orSession = (p: Principal | undefined) =>
        p || !request.headers.cookie
          ? admit(request, p, done)
          : sessionPrincipal(app, request).then((s) => admit(request, s, done), done);
      if (out && typeof (out as Promise<unknown>).then === 'function')
        (out as Promise<Principal | undefined>).then(orSession, done);
      else orSession(out as Principal | undefined);
    });
    app.get(
      '/auth/whoami',
      { schema: { tags: ['auth'], summary: 'The authenticated caller', response: { 200: Principal } } },
      async (request) => request.principal!,
    );
  },
  { name: 'switchboard-platform-auth' },
);

/** `/auth/config` is unversioned and exempt from authentication (spec 4.9). */
export const authConfigRoute = fp(
  async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/auth/config',
      {
        schema: {
          tags: ['auth'],
          summary: 'Auth configuration for UIs (no secrets)',
          response: { 200: Type.Record(Type.String(), Type.Unknown()) },
        },
      },
      async () => {
        const b = app.sb.providers.get<AuthBackend>('auth');
        return { backend: b?.type ?? 'none', ...(b?.publicConfig() ?? {}) };
      },
    );
  },
  { name: 'switchboard-auth-config' },
);
