import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { canAccessServer } from '../auth/access.ts';
import { healthConfig } from '../health/config.ts';
import { mcpTarget } from '../health/targets.ts';
import { pinnedConnector } from '../../../core/address-guard.ts';
import { openPubSub } from '../../../core/pubsub.ts';
import type { ServerRecord } from '../catalog/records.ts';
import { registerGateway, type GatewayBackend } from './proxy.ts';

/**
 * The built-in MCP gateway on the registry's catalog: `/{server}/mcp`, and
 * `/{server}/sse` + `/{server}/messages` for SSE servers.
 */
async function gatewayPlugin(app: FastifyInstance): Promise<void> {
  const cfg = healthConfig(app.sb.settings.config.registry);
  const servers = app.catalog.servers;
  // The catalog's guard: the same policy and name resolver as registration and health probes.
  const guard = app.catalog.guard;
  // The backend view of a server (target URL, headers with the credential
  // decrypted) is built once per stored record, not per proxied call. Records
  // are replaced, never mutated, on every update, credential change and
  // replica reload, so a cached entry is used only while its record is the
  // current one; the decrypted credential lives in this process's memory only.
  const backends = new Map<string, { record: ServerRecord; backend: GatewayBackend }>();
  servers.onChange((c) => backends.delete(c.key));
  // Replicas on one Redis: legacy SSE messages reaching this replica for a stream held by another are relayed.
  const storeUrl = app.sb.settings.store.url;
  const pubsub =
    app.sb.store.backend === 'redis' && storeUrl
      ? await openPubSub(storeUrl, (err) => app.log.debug({ err: err.message }, 'gateway SSE relay: Redis pub/sub'))
      : undefined;
  app.addHook('onClose', async () => pubsub?.close());
  await registerGateway(app, {
    pubsub,
    resolve: async (path) => {
      await servers.sync();
      const s = servers.get(path);
      if (!s) return undefined;
      const hit = backends.get(path);
      if (hit && hit.record === s) return hit.backend;
      const target = mcpTarget(s, servers.backendHeaders(s.path));
      const backend: GatewayBackend = {
        path: s.path,
        enabled: s.is_enabled,
        blocked: s.tags.includes('security-pending'),
        url: target.url,
        transport: target.transport,
        headers: target.headers,
        origin: s.proxy_pass_url,
      };
      backends.set(path, { record: s, backend });
      return backend;
    },
    allowed: (request, server, method, tool) => canAccessServer(request.user, server, method, tool),
    timeoutMs: cfg.gateway_timeout_seconds * 1000,
    blockedAddress: (...urls) => guard.blocked(...urls),
    // Judged again when each backend connection opens, on the address it then connects to (DNS rebinding).
    connect: pinnedConnector(guard.policy),
  });
}

export default fp(gatewayPlugin, {
  name: 'registry-gateway',
  dependencies: ['registry-auth', 'registry-catalog'],
  decorators: { fastify: ['sb', 'catalog'] },
});
