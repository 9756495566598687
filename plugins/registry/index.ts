import type { FastifyPluginAsync } from 'fastify';
import auth from './auth/index.ts';
import catalog from './catalog/index.ts';

/** The registry surface (registry-service.md): identity and scopes first, then the catalog. */
const registry: FastifyPluginAsync = async (app) => {
  await app.register(auth);
  await app.register(catalog);
};

export default registry;
