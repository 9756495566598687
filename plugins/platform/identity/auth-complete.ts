import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { badGateway, isSwitchboardError } from '../../../core/errors.ts';
import { CompleteAuthRequest, type IdentityProvider } from '../../../core/primitives/identity.ts';
import { requireMethod } from '../capability.ts';

/**
 * POST /identity/auth/complete: the last step of a 3-legged user authorization
 * (issue 14), in the reference client's shape. A USER_FEDERATION token request
 * with no stored token answers an authorization_url and a session_uri; the
 * user authorises at the issuer, which redirects to the callback with a code;
 * this call (by the caller that started it) trades that code for the user's
 * tokens, and the next token request returns them. 204, as the reference
 * answers. Providers that run no such flow (noop) answer 501 naming it.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/auth/complete',
    {
      schema: {
        tags: ['identity'],
        summary: "Complete a 3-legged user authorization: exchange the code for the user's tokens (204)",
        body: CompleteAuthRequest,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const p = app.sb.providers.resolve<IdentityProvider>('identity', request.headers);
      const complete = requireMethod(
        p,
        'completeAuth',
        'completing a 3-legged user authorization (no USER_FEDERATION sessions to complete)',
      );
      try {
        await complete(request.body, { principal: request.principal });
      } catch (err) {
        if (isSwitchboardError(err)) throw err;
        throw badGateway(
          'SB_ERR_IDENTITY_BACKEND_FAILED',
          `The identity provider '${p.name}' failed to complete the authorization: ${err instanceof Error ? err.message : String(err)}`,
          err,
        );
      }
      return reply.code(204).send(null);
    },
  );
};

export default routes;
