import fp from 'fastify-plugin';
import { Type } from '@sinclair/typebox';
import { unauthorized } from '../../core/errors.ts';
import type { AuthBackend } from '../../core/primitives/auth.ts';
import { Principal } from '../../core/primitives/auth.ts';

/**
 * Authenticates every /api/v1 request with the configured auth backend (kind
 * `auth`, default `noop`). Registered inside the /api/v1 scope, so ops routes
 * and the registry surface are untouched.
 */
export default fp(
  async (app) => {
    const backend = () => app.sb.providers.get<AuthBackend>('auth');
    app.addHook('onRequest', async (request) => {
      const b = backend();
      if (!b) throw unauthorized('SB_ERR_AUTH_NO_BACKEND', 'No auth backend is configured');
      const principal = await b.authenticate({ headers: request.headers });
      if (!principal) throw unauthorized('SB_ERR_AUTH_INVALID');
      request.principal = principal;
    });
    app.get('/auth/whoami', { schema: { tags: ['auth'], summary: 'The authenticated caller', response: { 200: Principal } } }, async (request) => request.principal!);
  },
  { name: 'switchboard-platform-auth' },
);

/** `/auth/config` is unversioned and exempt from authentication (spec 4.9). */
export const authConfigRoute = fp(
  async (app) => {
    app.get(
      '/auth/config',
      { schema: { tags: ['auth'], summary: 'Auth configuration for UIs (no secrets)', response: { 200: Type.Record(Type.String(), Type.Unknown()) } } },
      async () => {
        const b = app.sb.providers.get<AuthBackend>('auth');
        return { backend: b?.type ?? 'none', ...(b?.publicConfig() ?? {}) };
      },
    );
  },
  { name: 'switchboard-auth-config' },
);
