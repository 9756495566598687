import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from '@sinclair/typebox';
import type { IdentityProvider } from '../../../core/primitives/identity.ts';

const Jwks = Type.Object({
  keys: Type.Array(Type.Object({ kid: Type.Optional(Type.String()) }, { additionalProperties: true })),
});

/**
 * /.well-known/jwks.json: the public keys of every identity provider that
 * signs workload tokens, so downstream services verify agents without
 * calling Switchboard. Public by nature: outside /api/v1 and its auth.
 */
export default fp(
  async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/.well-known/jwks.json',
      { schema: { tags: ['identity'], summary: 'Public keys that verify workload tokens', response: { 200: Jwks } } },
      async (_request, reply) => {
        const seen = new Map<string, Record<string, unknown>>();
        for (const name of app.sb.providers.names('identity')) {
          const p = app.sb.providers.get<IdentityProvider>('identity', name);
          for (const k of (await p?.publicJwks?.())?.keys ?? []) seen.set(String(k.kid ?? seen.size), k);
        }
        // Short: a rotated key shows up within minutes, and verifiers refetch on an unknown kid anyway.
        reply.header('cache-control', 'public, max-age=300');
        return { keys: [...seen.values()] };
      },
    );
  },
  { name: 'switchboard-workload-jwks' },
);
