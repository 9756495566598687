import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Health } from '../../core/provider.ts';
import { withinDeadline } from '../../core/store-deadline.ts';

const Checks = Type.Record(
  Type.String(),
  Type.Union([Type.Literal('ok'), Type.Literal('reachable'), Type.Literal('down')]),
);
const Ready = Type.Object({
  status: Type.String(),
  checks: Checks,
  reseeded: Type.Optional(
    Type.Object(
      { at: Type.String({ format: 'date-time' }), seeds: Type.Array(Type.String()) },
      {
        description: 'The last time this process found the store emptied (its seed sentinel gone) and seeded it again',
      },
    ),
  ),
});

/** How long /readyz waits for the seed check (core/store-seeds.ts) before calling the store down. */
const SEED_CHECK_DEADLINE_MS = 5000;

/** Liveness, readiness and (in metrics.ts) Prometheus metrics; unversioned and unauthenticated. */
const ops: FastifyPluginAsyncTypebox = async (app) => {
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
        response: { 200: Ready, 503: Ready },
      },
    },
    async (_request, reply) => {
      const [providers, reachable] = await Promise.all([app.sb.providers.health(), app.sb.store.healthcheck()]);
      // A store that answers may still have come back empty: the seed check notices and repairs it.
      const store = reachable === 'down' || (await seedCheck()) === 'down' ? 'down' : reachable;
      const all: Record<string, Health> = { ...providers, [`store/${app.sb.store.backend}`]: store };
      const checks = Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b)));
      const values = Object.values(checks);
      const status = values.includes('down') ? 'error' : values.includes('reachable') ? 'degraded' : 'ok';
      const reseeded = app.sb.seeds.lastReseed;
      return reply
        .status(status === 'error' ? 503 : 200)
        .send(reseeded ? { status, checks, reseeded } : { status, checks });
    },
  );

  const seedCheck = async (): Promise<Health> => {
    try {
      await withinDeadline(app.sb.seeds.check(), SEED_CHECK_DEADLINE_MS, () => new Error('seed check: no answer'));
      return 'ok';
    } catch {
      return 'down';
    }
  };
};

export default ops;
