import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';

const Checks = Type.Record(Type.String(), Type.Union([Type.Literal('ok'), Type.Literal('reachable'), Type.Literal('down')]));

/** Liveness, readiness and (in metrics.ts) Prometheus metrics; unversioned and unauthenticated. */
const ops: FastifyPluginAsync = async (app) => {
  app.get(
    '/healthz',
    { schema: { tags: ['ops'], summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['ops'],
        summary: 'Readiness: every provider and the store, tri-state; 503 only when one is down',
        response: {
          200: Type.Object({ status: Type.String(), checks: Checks }),
          503: Type.Object({ status: Type.String(), checks: Checks }),
        },
      },
    },
    async (_request, reply) => {
      const [providers, store] = await Promise.all([app.sb.providers.health(), app.sb.store.healthcheck()]);
      const checks = Object.fromEntries(
        Object.entries({ ...providers, [`store/${app.sb.store.backend}`]: store }).sort(([a], [b]) => a.localeCompare(b)),
      );
      const values = Object.values(checks);
      const status = values.includes('down') ? 'error' : values.includes('reachable') ? 'degraded' : 'ok';
      return reply.status(status === 'error' ? 503 : 200).send({ status, checks });
    },
  );
};

export default ops;
