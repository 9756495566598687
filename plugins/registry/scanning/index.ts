import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { ScannerProvider } from '../../../core/primitives/scanners.ts';
import { AnalyzerSet, LLM_KEY_VARS } from './analyzers.ts';
import { ScanResults } from './results-store.ts';
import scanRoutes from './routes.ts';
import { ScanService } from './service.ts';
import { scanSettings } from './settings.ts';

/**
 * Security scanning of the registry (spec 2.6, 3, 4.10): the catalog's scan
 * hook, stored results and the rescan / security-scan endpoints. Registered
 * after the catalog; it replaces the catalog's pass-everything hook.
 */
async function scanningPlugin(app: FastifyInstance): Promise<void> {
  const settings = scanSettings(app.sb.settings.config.registry, process.env);
  // Spec 4.10's MCP_SCANNER_LLM_API_KEY / SKILL_SECURITY_LLM_API_KEY: the scanners package's `llm-keys` instance
  // (made where a key is set) is the `llm` analyzer of each subject whose key is set.
  const keyed = app.sb.providers.get<ScannerProvider>('scanners', 'llm-keys');
  const keyJudges: ConstructorParameters<typeof AnalyzerSet>[1] = {};
  for (const kind of ['server', 'agent', 'skill'] as const) {
    if (keyed && LLM_KEY_VARS[kind].some((v) => process.env[v])) keyJudges[kind] = keyed;
  }
  const analyzers = new AnalyzerSet(app.sb.providers, keyJudges);
  const results = new ScanResults(app.sb.settings.dataDir, app.sb.store);
  const service = new ScanService(settings, analyzers, results, app.catalog, app.log);
  // A configured analyzer that cannot run makes every scan fail (on_scan_failure decides): say so at start.
  for (const kind of ['server', 'agent', 'skill'] as const) {
    if (!settings[kind].enabled) continue;
    for (const name of settings[kind].analyzers) {
      const problem = analyzers.problem(name, kind);
      if (problem)
        app.log.warn(
          `security scanning of ${kind}s: ${problem}; scans will fail (on_scan_failure: ${settings.on_scan_failure})`,
        );
    }
  }
  app.catalog.scanner = service;
  const stops = [service.watchDiscoveredTools(), service.watchEdits()];
  app.addHook('onClose', async () => {
    for (const stop of stops) stop();
  });
  const { servers, agents, skills } = app.catalog;
  await app.register(async (scope) => {
    // Replicas sharing a Redis store reload what another replica changed, as the catalog's routes do.
    scope.addHook('onRequest', async () => {
      for (const sync of [servers.sync, agents.sync, skills.sync]) await sync();
    });
    await scope.register(scanRoutes, { service });
  });
}

export default fp(scanningPlugin, {
  name: 'registry-scanning',
  dependencies: ['registry-catalog'],
  decorators: { fastify: ['sb', 'catalog'] },
});
