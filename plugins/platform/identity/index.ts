import type { FastifyPluginAsync } from 'fastify';

/** Routes of /api/v1/identity: not built yet. */
const routes: FastifyPluginAsync = async () => {};

export default routes;
