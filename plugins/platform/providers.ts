import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerCredentials } from './credentials-headers.ts';

const Listing = Type.Record(
  Type.String(),
  Type.Object({ default: Type.Union([Type.String(), Type.Null()]), available: Type.Array(Type.String()) }),
);
const Checks = Type.Object({
  checks: Type.Record(Type.String(), Type.Union([Type.Literal('ok'), Type.Literal('reachable'), Type.Literal('down')])),
});

const providers: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/providers',
    { schema: { tags: ['providers'], summary: 'Providers per primitive', response: { 200: Listing } } },
    async () => app.sb.providers.listing(),
  );
  app.get(
    '/providers/status',
    {
      schema: {
        tags: ['providers'],
        summary: "Provider health with the caller's resolved credentials",
        response: { 200: Checks },
      },
    },
    async (request) => ({ checks: await app.sb.providers.health(callerCredentials(request.headers)) }),
  );
};

export default providers;
