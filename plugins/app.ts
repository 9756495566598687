import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { loadSettings, type LoadOptions, type Settings } from '../core/config.ts';
import type { DestinationStream } from 'pino';
import { discoverPackages, type DiscoveryRoots } from '../core/discovery.ts';
import { buildProviders } from '../core/providers.ts';
import { openStore, type Store } from '../core/store.ts';
import { StoreSeeds } from '../core/store-seeds.ts';
import type { LateServices } from '../core/registry-link.ts';
import type { SwitchboardContext } from './context.ts';
import type { HostLookup } from '../core/address-guard.ts';
import bodyParsers from './body-parsers.ts';
import errors from './errors.ts';
import { clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH } from './framework-errors.ts';
import { DEFAULT_JSON_LIMITS } from './json-limits.ts';
import requestContext, { requestIdGenerator } from './request-context.ts';
import { lazyCompilers, trackLazyCompilers } from './ops/lazy-compilers.ts';
import { createRootLogger, requestLoggerFactory } from './ops/logging.ts';
import metrics from './ops/metrics.ts';
import openapi from './ops/openapi.ts';
import ops from './ops/index.ts';
import consolePlugin from './console/index.ts';
import landingPage from './pages/landing.ts';
import platform from './platform/index.ts';
import registry from './registry/index.ts';

export interface BuildOptions extends LoadOptions {
  /** A ready store (tests pass an in-memory one); otherwise opened from settings. */
  store?: Store;
  /** Overrides the log level from settings (tests use 'silent'). */
  logLevel?: string;
  /** Where log lines go (tests capture them); stdout by default. */
  logStream?: DestinationStream;
  /** Where provider packages are discovered (tests point this at fixture roots). */
  discovery?: DiscoveryRoots;
  /** Runs after the core plugins and before the surfaces: tests add routes here. */
  beforeSurfaces?: (app: FastifyInstance) => Promise<void> | void;
  /** Name resolution for the SSRF guard's connect-time checks (tests simulate DNS, e.g. rebinding); the system resolver by default. */
  hostLookup?: HostLookup;
}

/** How often the store is checked for having come back empty (core/store-seeds.ts); /readyz also checks. */
const SEED_CHECK_INTERVAL_MS = 5000;

export { REDACT } from './ops/logging.ts';
export { compileAllSchemas } from './ops/lazy-compilers.ts';

export async function buildApp(opts: BuildOptions = {}): Promise<FastifyInstance> {
  const settings: Settings = loadSettings(opts);
  const lazy = lazyCompilers();
  const log = createRootLogger(opts.logLevel ?? settings.logLevel, opts.logStream);
  const app = Fastify({
    // No Fastify logger: ours is set as app.log below and request loggers are made from it (ops/logging.ts).
    logger: false,
    bodyLimit: settings.config.body_limit_bytes ?? 1024 * 1024,
    // An incoming X-Request-Id is kept when it is a sane token; anything else
    // (huge, or with characters that could forge log lines) gets a fresh id.
    requestIdHeader: false,
    genReqId: requestIdGenerator(),
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false } },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Router and HTTP-parser errors answer {detail, code} like every other error (framework-errors.ts).
    frameworkErrors,
    clientErrorHandler,
    // A request's pino child is made only when the request logs at an enabled level (ops/logging.ts).
    childLoggerFactory: requestLoggerFactory(log) as never,
    // Validators and serialisers compile on a route's first request (plugins/ops/lazy-compilers.ts).
    schemaController: { compilersFactory: lazy.compilersFactory },
  }).withTypeProvider<TypeBoxTypeProvider>();
  trackLazyCompilers(app, lazy);
  // Fastify keeps its logger as a plain `log` property of the root instance, which every plugin's
  // instance inherits; this replaces its no-op logger with ours (test/ops/logging.test.ts checks both).
  (app as unknown as { log: unknown }).log = log;

  const store =
    opts.store ??
    (await openStore({
      backend: settings.store.backend,
      dataDir: settings.dataDir,
      url: settings.store.url,
      commandTimeoutMs: settings.store.commandTimeoutMs,
    }));
  let packages: Awaited<ReturnType<typeof discoverPackages>>;
  let providers: Awaited<ReturnType<typeof buildProviders>>;
  // Filled by the surface plugins below; providers read it when called (core/registry-link.ts).
  const services: LateServices = {};
  const seeds = new StoreSeeds(store, app.log);
  try {
    await seeds.mark();
    packages = await discoverPackages(settings.config.provider_packages, settings.configDir, opts.discovery);
    providers = await buildProviders({
      packages,
      config: settings.config,
      store,
      logger: app.log,
      dataDir: settings.dataDir,
      services,
      surfaces: settings.surfaces,
    });
  } catch (err) {
    // A startup failure must not leave the SQLite file or a Redis client open.
    if (!opts.store) await store.close();
    throw err;
  }
  const ctx: SwitchboardContext = {
    settings,
    store,
    seeds,
    providers,
    packages,
    services,
    startedAt: Date.now(),
    hostLookup: opts.hostLookup,
  };
  app.decorate('sb', ctx);
  app.addHook('onReady', async () => seeds.watch(SEED_CHECK_INTERVAL_MS));
  app.addHook('onClose', async () => {
    seeds.stop();
    await providers.closeAll();
    if (!opts.store) await store.close();
  });

  await app.register(requestContext);
  await app.register(metrics);
  await app.register(errors);
  const jsonLimits = settings.config.json_limits;
  await app.register(bodyParsers, {
    limits: {
      maxDepth: jsonLimits?.max_depth ?? DEFAULT_JSON_LIMITS.maxDepth,
      maxObjectKeys: jsonLimits?.max_object_keys ?? DEFAULT_JSON_LIMITS.maxObjectKeys,
    },
  });
  await app.register(openapi);
  await app.register(ops);
  // Before the pages and surfaces: its onRoute hook sends browsers on their HTML routes to the console.
  await app.register(consolePlugin);
  await app.register(landingPage);
  if (opts.beforeSurfaces) await opts.beforeSurfaces(app as unknown as FastifyInstance);
  if (settings.surfaces.includes('platform')) await app.register(platform);
  if (settings.surfaces.includes('registry')) await app.register(registry);
  return app as unknown as FastifyInstance;
}
