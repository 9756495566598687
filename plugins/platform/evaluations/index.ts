import type { FastifyPluginAsync } from 'fastify';

/** Routes of /api/v1/evaluations: not built yet. */
const routes: FastifyPluginAsync = async () => {};

export default routes;
