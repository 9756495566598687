import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createFernet } from '../../../core/crypto/fernet.ts';
import { loadSecrets } from '../../../core/secrets.ts';
import type { CredentialAudit } from './records.ts';
import { AgentRepository } from './agents-repo.ts';
import { catalogConfig } from './config.ts';
import { rememberCatalog, type Catalog } from './context.ts';
import { CredentialAuditLog } from './credentials.ts';
import { Ratings } from './ratings.ts';
import { passingScan } from './scan.ts';
import { ServerRepository } from './servers.ts';
import { SkillRepository } from './skills-repo.ts';
import { BackendGuard, allowLinkLocalBackends } from '../health/guard.ts';
import { registryAuthOf } from '../auth/index.ts';
import { resourceKey } from '../auth/resource-binding.ts';
import { agentVisible, serverVisible, skillVisible } from './access.ts';
import serversApi from './servers-api.ts';
import uiRoutes from './ui.ts';
import legacyRoutes from './legacy.ts';
import internalRoutes from './internal.ts';
import v0Routes from './v0.ts';
import v01Routes from './v0-1.ts';
import wellKnownRoutes from './well-known.ts';
import agentRoutes from './agents.ts';
import agentDiscoveryRoutes from './agents-discover.ts';
import skillRoutes from './skills.ts';
import discoveryRoutes from '../discovery/routes.ts';

/**
 * The registry catalog: MCP servers, A2A agents and Agent Skills in the core
 * store, mirrored in memory. fp-wrapped so `app.catalog` reaches the sibling
 * registry plugins (health, gateway, scanning) registered after it.
 */
async function catalogPlugin(app: FastifyInstance): Promise<void> {
  const config = catalogConfig(app.sb.settings.config.registry);
  const { encryptionKey } = loadSecrets(app.sb.settings.dataDir, process.env);
  const fernet = createFernet(encryptionKey);
  const store = app.sb.store;
  const audit = new CredentialAuditLog(store.collection<CredentialAudit>('registry_credential_audit'), app.log);
  const servers = new ServerRepository(store, fernet, audit);
  const agents = new AgentRepository(store);
  const skills = new SkillRepository(store);
  const ratings = new Ratings(store);
  // One after another: the SQLite store shares one scan statement, so concurrent listings fail ('statement is busy').
  for (const load of [servers.load, agents.load, skills.load, () => ratings.index.load()]) await load();
  const guard = new BackendGuard(allowLinkLocalBackends(app.sb.settings.config.registry), app.sb.hostLookup);
  app.addHook('onClose', async () => guard.close());
  const catalog: Catalog = { config, fernet, servers, agents, skills, ratings, audit, scanner: passingScan, guard };
  servers.scanner = () => catalog.scanner;
  app.decorate('catalog', catalog);
  rememberCatalog(app, catalog);
  // Token minting (spec 4.4 rule 7) follows the catalog's visibility for the resources it holds.
  registryAuthOf(app).resourceVisible = (user, type, id) => {
    if (type === 'server') {
      const s = servers.get(`/${id}`);
      return s ? serverVisible(user, s) : undefined;
    }
    if (type === 'agent') {
      const a = agents.index.get(`/${id}`);
      return a ? agentVisible(user, a) : undefined;
    }
    if (type === 'skill') {
      const k = skills.index.get(`/skills/${resourceKey('skill', id)}`);
      return k ? skillVisible(user, k) : undefined;
    }
    return undefined;
  };

  await app.register(async (scope) => {
    // Replicas sharing a Redis store reload a collection another replica changed (see repository.ts).
    scope.addHook('onRequest', async () => {
      for (const sync of [servers.sync, agents.sync, skills.sync, () => ratings.index.sync()]) await sync();
    });
    await scope.register(serversApi);
    await scope.register(uiRoutes);
    await scope.register(legacyRoutes);
    await scope.register(internalRoutes);
    await scope.register(v0Routes);
    await scope.register(v01Routes);
    await scope.register(wellKnownRoutes);
    await scope.register(agentRoutes);
    await scope.register(agentDiscoveryRoutes);
    await scope.register(skillRoutes);
    await scope.register(discoveryRoutes);
  });
}

export default fp(catalogPlugin, {
  name: 'registry-catalog',
  dependencies: ['registry-auth'],
  decorators: { fastify: ['sb'] },
});
