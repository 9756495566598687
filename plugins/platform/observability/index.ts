import type { FastifyPluginAsync } from 'fastify';

/** Routes of /api/v1/observability: not built yet. */
const routes: FastifyPluginAsync = async () => {};

export default routes;
