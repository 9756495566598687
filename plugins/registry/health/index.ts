import fp from 'fastify-plugin';
import websocket from '@fastify/websocket';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requireBasicAdmin, requirePermission, requireUser } from '../auth/access.ts';
import { serverVisibility } from '../catalog/access.ts';
import { decodedOnce } from '../catalog/server-actions.ts';
import type { ServerRecord } from '../catalog/records.ts';
import { disabledStatus, HealthChecker, type CheckableServer } from './checker.ts';
import { healthConfig } from './config.ts';
import { HealthHub, type HealthEntry } from './hub.ts';
import { openPubSub } from '../../../core/pubsub.ts';
import { SweepClaim } from './sweep-claim.ts';
import { HealthHistory, HISTORY_LIMIT, SAMPLE_EVERY_MS } from './history.ts';
import { currentUser, visibleServer } from '../catalog/server-actions.ts';
import { ErrorResponses } from '../catalog/shared-schemas.ts';
import { mcpTarget } from './targets.ts';

const Entry = Type.Object({
  status: Type.String(),
  last_checked_iso: Type.Union([Type.String(), Type.Null()]),
  num_tools: Type.Integer(),
});
const HealthMap = Type.Record(Type.String(), Entry);
const Refresh = Type.Object({
  path: Type.String(),
  health_status: Type.String(),
  last_checked_iso: Type.Union([Type.String(), Type.Null()]),
  num_tools: Type.Integer(),
  tools: Type.Array(
    Type.Object({
      name: Type.String(),
      description: Type.String(),
      inputSchema: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
});
const Params = Type.Object({ server: Type.String() });
const HistoryParams = Type.Object({ server: Type.String({ description: 'Server path without the leading slash' }) });
const Sample = Type.Object({
  status: Type.String(),
  checked_at: Type.String({ description: 'ISO 8601' }),
  latency_ms: Type.Optional(Type.Integer({ description: 'Probe duration; absent when the server was not probed' })),
  detail: Type.Optional(Type.String({ description: 'Why it was unhealthy' })),
});
const History = Type.Object({
  path: Type.String(),
  limit: Type.Integer({ description: 'At most this many samples are kept' }),
  sample_every_seconds: Type.Integer({ description: 'An unchanged status is recorded at most this often' }),
  samples: Type.Array(Sample, { description: 'Newest first' }),
});

/** The Redis pub/sub channel of health changes between replicas. */
const HEALTH_CHANNEL = 'switchboard:registry:health';

/** A disabled server reads `disabled`, or unhealthy when a security scan holds it (spec 3). */
const shownStatus = (s: ServerRecord) =>
  s.is_enabled ? s.health_status : disabledStatus(s.tags.includes('security-pending'));

const entryOf = (s: ServerRecord): HealthEntry => ({
  status: shownStatus(s),
  last_checked_iso: s.last_checked_iso,
  num_tools: s.num_tools,
});

/**
 * Health checks and tool discovery over MCP, the refresh endpoints, and live
 * status over WebSocket (spec 4.3, 4.6, 4.8, 6).
 */
async function healthPlugin(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const cfg = healthConfig(app.sb.settings.config.registry);
  const servers = app.catalog.servers;
  // The catalog's guard: one policy and one name resolver for registration, probes and the gateway.
  const guard = app.catalog.guard;

  const checkable = (s: ServerRecord): CheckableServer => ({
    path: s.path,
    enabled: s.is_enabled,
    version: s.updated_at,
    storedStatus: s.health_status,
    held: s.tags.includes('security-pending'),
    manualTools: (s.tool_list_json?.length ?? 0) > 0,
    // Read again at probe time: the credential is decrypted then, for that probe only.
    // Connections go through the backend guard's dispatcher, which judges the address again at connect time.
    target: () => ({ ...mcpTarget(s, servers.backendHeaders(s.path)), dispatcher: guard.dispatcher }),
    origin: s.proxy_pass_url,
    entry: entryOf(s),
  });
  const snapshot = async (): Promise<Record<string, HealthEntry>> => {
    // A dashboard's first full status includes what other replicas wrote (repository.ts).
    await servers.sync();
    return Object.fromEntries(servers.list().map((s) => [s.path, entryOf(s)]));
  };

  // Only a store other processes share needs the claim; on SQLite or memory this process is the only sweeper.
  const sweepClaim =
    app.sb.store.backend === 'redis' && cfg.interval_seconds > 0
      ? new SweepClaim(app.sb.store, cfg.interval_seconds * 1000)
      : undefined;
  // The last results of each server, shared by replicas through the core store (history.ts).
  const history = new HealthHistory(app.sb.store);
  const hub = new HealthHub(cfg.max_ws_connections, snapshot, cfg.ws_ping_seconds * 1000);
  // Replicas on one Redis: a change made here (a sweep result, a registration) also reaches the dashboards
  // connected to the other replicas, and theirs reach ours. Only the replica that wrote a record sees its
  // change event, so each change is published once.
  const storeUrl = app.sb.settings.store.url;
  const pubsub =
    app.sb.store.backend === 'redis' && storeUrl
      ? await openPubSub(storeUrl, (err) => app.log.debug({ err: err.message }, 'health feed: Redis pub/sub'))
      : undefined;
  const unsubscribeFeed = pubsub?.subscribe(HEALTH_CHANNEL, (m) => hub.broadcast(m as Record<string, HealthEntry>));
  const broadcast = (changes: Record<string, HealthEntry>) => {
    hub.broadcast(changes);
    pubsub?.publish(HEALTH_CHANNEL, changes);
  };
  const checker = new HealthChecker(
    {
      // Another replica may have registered or removed servers since this one last looked (repository.ts).
      paths: async () => {
        await servers.sync();
        return servers.list().map((s) => s.path);
      },
      server: async (path) => {
        const s = servers.get(path);
        return s ? checkable(s) : undefined;
      },
      save: async (path, record) => {
        const s = await servers.updateHealth(path, record);
        // A history that cannot be written must not fail the check: the status itself is saved.
        if (s)
          await history
            .record(path, shownStatus(s), record.last_checked_iso, record.latency_ms)
            .catch((err: Error) => app.log.warn({ path, err: err.message }, 'health history'));
        return s
          ? entryOf(s)
          : { status: record.health_status, last_checked_iso: record.last_checked_iso, num_tools: 0 };
      },
      logger: app.log,
      blockedAddress: (...urls) => guard.blocked(...urls),
      claimSweep: sweepClaim ? () => sweepClaim.claim() : undefined,
    },
    {
      intervalMs: cfg.interval_seconds * 1000,
      timeoutMs: cfg.timeout_seconds * 1000,
      concurrency: cfg.concurrency,
      spread: cfg.sweep_spread,
      firstCheckRetryMs: cfg.first_check_retry_seconds.map((s) => s * 1000),
    },
  );

  // Every change of a server that alters its health entry reaches the dashboards.
  const unsubscribe = servers.onChange((c) => {
    if (c.kind === 'deleted') {
      void history.forget(c.key).catch((err: Error) => app.log.warn({ err: err.message }, 'health history'));
      return;
    }
    const now = entryOf(c.value!);
    const before = c.previous ? entryOf(c.previous) : undefined;
    if (
      !before ||
      before.status !== now.status ||
      before.last_checked_iso !== now.last_checked_iso ||
      before.num_tools !== now.num_tools
    ) {
      broadcast({ [c.key]: now });
    }
    // A newly registered or re-enabled server is checked at once rather than at the next sweep (and soon again if that fails).
    if (c.kind === 'created' || (c.previous && !c.previous.is_enabled && c.value!.is_enabled))
      void checker.checkNew(c.key).catch(() => {});
  });

  app.addHook('onReady', async () => checker.start());
  app.addHook('onClose', async () => {
    unsubscribe();
    hub.close();
    await unsubscribeFeed?.();
    await pubsub?.close();
    await checker.stop();
  });

  const refresh = async (path: string) => {
    const s = servers.require(path);
    await checker.checkPath(s.path);
    const after = servers.require(s.path);
    return {
      path: after.path,
      health_status: shownStatus(after),
      last_checked_iso: after.last_checked_iso,
      num_tools: after.num_tools,
      tools: after.tools.map((t) => ({
        name: t.name,
        description: t.description ?? '',
        inputSchema: t.inputSchema ?? {},
      })),
    };
  };
  const pathOf = (server: string) => `/${decodedOnce(server).replace(/^\/+|\/+$/g, '')}`;

  const refreshSchema = { tags: ['registry-health'], params: Params, response: { 200: Refresh } };
  app.post(
    '/api/servers/:server/refresh',
    { schema: { ...refreshSchema, summary: 'Check a server now and re-discover its tools' } },
    async (request) => {
      const path = pathOf(request.params.server);
      requirePermission(request, 'health_check_service', path);
      return refresh(path);
    },
  );
  for (const prefix of ['/api/refresh', '/refresh']) {
    app.post(
      `${prefix}/:server`,
      { schema: { ...refreshSchema, summary: 'Manual health check and tool discovery' } },
      async (request) => {
        const path = pathOf(request.params.server);
        requirePermission(request, 'health_check_service', path);
        return refresh(path);
      },
    );
  }

  app.post(
    '/api/internal/healthcheck',
    {
      schema: {
        tags: ['registry-internal'],
        summary: 'Check every server now (HTTP Basic admin)',
        response: { 200: HealthMap },
      },
    },
    async (request) => {
      requireBasicAdmin(request);
      return checker.sweep();
    },
  );

  app.get(
    '/api/servers/health',
    {
      schema: {
        tags: ['registry-health'],
        summary: 'Health of every server the caller can see',
        response: { 200: Type.Object({ servers: HealthMap }) },
      },
    },
    async (request) => {
      // The same visibility as GET /api/servers (resource-bound tokens and server groups included).
      const visible = serverVisibility(requireUser(request));
      return {
        servers: Object.fromEntries(
          servers
            .list()
            .filter(visible)
            .map((s) => [s.path, entryOf(s)]),
        ),
      };
    },
  );

  app.get(
    '/api/servers/:server/health/history',
    {
      schema: {
        tags: ['registry-health'],
        summary: 'The last health results of a server, newest first (changes, plus one sample a minute)',
        params: HistoryParams,
        response: { 200: History, ...ErrorResponses },
      },
    },
    async (request) => {
      // Who may read the server may read its history (the same check as GET /api/servers/{server}).
      const s = visibleServer(app.catalog, currentUser(request), pathOf(request.params.server));
      return {
        path: s.path,
        limit: HISTORY_LIMIT,
        sample_every_seconds: SAMPLE_EVERY_MS / 1000,
        samples: await history.list(s.path),
      };
    },
  );

  app.get(
    '/api/health/ws/stats',
    {
      schema: {
        tags: ['registry-health'],
        summary: 'WebSocket statistics',
        response: {
          200: Type.Object({
            active_connections: Type.Integer(),
            total_messages_sent: Type.Integer(),
            uptime_seconds: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      // Like every other registry API: a caller without credentials learns nothing about the service.
      requireUser(request);
      return hub.stats();
    },
  );

  // The WebSocket plugin in a scope of its own: it adds an onRequest and an onResponse hook to every
  // route of the scope it is registered in, and an onResponse hook makes Fastify put two listeners on
  // every response. Upgrades that reach a route without a WebSocket handler are closed by
  // plugins/request-context.ts.
  await app.register(async (ws) => {
    await ws.register(websocket, { options: { maxPayload: 4096 } });
    // One path, two faces: a plain GET is the HTTP snapshot (no auth), an Upgrade is the live feed (session required).
    ws.route({
      method: 'GET',
      url: '/api/health/ws/health_status',
      schema: {
        tags: ['registry-health'],
        summary: 'Health of every server (HTTP snapshot; WebSocket with a session for live updates)',
        response: { 200: HealthMap },
      },
      handler: async () => snapshot(),
      wsHandler: (socket, request) => {
        if (!request.user) {
          socket.close(4401, 'a session cookie is required');
          return;
        }
        void hub.add(socket);
      },
    });
    ws.get('/ws/health_status', { websocket: true, schema: { hide: true } }, (socket) => {
      void hub.add(socket);
    });
  });
}

export default fp(healthPlugin, {
  name: 'registry-health',
  dependencies: ['registry-auth', 'registry-catalog'],
  decorators: { fastify: ['sb', 'catalog'] },
});
