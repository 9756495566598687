import type { FastifyPluginAsync } from 'fastify';

/** Routes of /api/v1/tools: not built yet. */
const routes: FastifyPluginAsync = async () => {};

export default routes;
