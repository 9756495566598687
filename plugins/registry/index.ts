import type { FastifyPluginAsync } from 'fastify';
import auth from './auth/index.ts';
import catalog from './catalog/index.ts';
import health from './health/index.ts';
import scanning from './scanning/index.ts';
import gateway from './gateway/index.ts';
import { inProcessRegistryLink } from './platform-link.ts';

/**
 * The registry surface (registry-service.md): identity and scopes first, then
 * the catalog, health checks, and the MCP gateway (gateway deployment mode only:
 * in registry-only mode clients reach backends directly).
 */
const registry: FastifyPluginAsync = async (app) => {
  await app.register(auth);
  await app.register(catalog);
  await app.register(scanning);
  await app.register(health);
  if (!app.catalog.config.registryOnly) await app.register(gateway);
  // Platform providers (the `registry` tools provider) reach this surface through the core's late-bound slot.
  app.sb.services.registry = inProcessRegistryLink(app);
};

export default registry;
