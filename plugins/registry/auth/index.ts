import type { FastifyPluginAsync } from 'fastify';

/** Registry auth: not built yet. */
const routes: FastifyPluginAsync = async () => {};

export default routes;
