import type { FastifyPluginAsync } from 'fastify';

/** Registry catalog: not built yet. */
const routes: FastifyPluginAsync = async () => {};

export default routes;
