import type { FastifyPluginAsync } from 'fastify';

/** The registry surface (registry-service.md): not built yet. */
const registry: FastifyPluginAsync = async () => {};

export default registry;
