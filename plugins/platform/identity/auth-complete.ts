import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { badGateway, isSwitchboardError } from '../../../core/errors.ts';
import { CompleteAuthRequest, type IdentityProvider } from '../../../core/primitives/identity.ts';
import { requireMethod } from '../capability.ts';

/**
 * POST /identity/auth/complete: the reference client's last step of a 3-legged
 * user authorization (issue 14). It only means something to a provider that
 * ran such a flow (USER_FEDERATION handing out an authorization_url and a
 * session); the providers shipped today issue no such sessions, so they answer
 * 501 naming what is missing rather than pretending the step succeeded. A
 * provider that implements `completeAuth` gets 204, as the reference answers.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/auth/complete',
    {
      schema: {
        tags: ['identity'],
        summary: 'Confirm a 3-legged user authorization (204; 501 unless the provider runs such flows)',
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
