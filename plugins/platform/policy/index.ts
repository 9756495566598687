import type { FastifyPluginAsync } from 'fastify';

/** Routes of /api/v1/policy: not built yet. */
const routes: FastifyPluginAsync = async () => {};

export default routes;
