import type { FastifyPluginAsync } from 'fastify';

/** Routes of /api/v1/code-interpreter: not built yet. */
const routes: FastifyPluginAsync = async () => {};

export default routes;
