import type { FastifyPluginAsync } from 'fastify';

/** Routes of /api/v1/agents: not built yet. */
const routes: FastifyPluginAsync = async () => {};

export default routes;
