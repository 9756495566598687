import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import { openStore, type Store } from '../../core/store.ts';
import { buildApp, type BuildOptions } from '../../plugins/app.ts';

/** A fresh temporary DATA_DIR per call. */
export function tempDir(prefix = 'sb-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * An app for `inject()` tests: in-memory store, silent logs, a temp DATA_DIR,
 * and no env config file unless the test passes one. Closed by t.teardown.
 */
export async function makeApp(
  t: { teardown: (fn: () => unknown) => void },
  config: Record<string, unknown> = {},
  opts: BuildOptions & { store?: Store } = {},
): Promise<FastifyInstance> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: opts.env?.DATA_DIR ?? tempDir(), ...opts.env };
  delete env.SWITCHBOARD_CONFIG;
  delete env.REDIS_URL;
  const store = opts.store ?? (await openStore({ backend: 'memory' }));
  const app = await buildApp({
    ...opts,
    env,
    config: onNoopEngines(config),
    store,
    logLevel: opts.logLevel ?? 'silent',
  });
  await app.ready();
  t.teardown(() => app.close());
  return app;
}

/** Primitives whose real provider becomes the default when its engine (Chromium, bubblewrap) is on the machine. */
const ENGINE_KINDS = ['browser', 'code_interpreter'];

/**
 * Tests get the noop default for those primitives unless their config names the kind: otherwise every test
 * that touches a browser or code session on a machine with the engine would start it. The tests of the real
 * providers, and of the default selection, configure them explicitly.
 */
function onNoopEngines(config: Record<string, unknown>): Record<string, unknown> {
  const providers = { ...((config.providers as Record<string, unknown> | undefined) ?? {}) };
  for (const kind of ENGINE_KINDS) providers[kind] ??= { default: 'noop' };
  return { ...config, providers };
}

/**
 * Sends one request and asserts its status (named by the message, else by method and URL); the response is
 * returned for the checks that follow.
 */
export async function expectStatus(
  t: Pick<Test, 'equal'>,
  app: FastifyInstance,
  request: InjectOptions,
  status: number,
  message = `${request.method ?? 'GET'} ${request.url}`,
): Promise<LightMyRequestResponse> {
  const res = await app.inject(request);
  t.equal(res.statusCode, status, message);
  return res;
}

type Payload = InjectOptions['payload'];

/**
 * Requests as one caller (its credential headers; none for an anonymous caller), each asserting the status
 * it must get: `await as(alice).post(url, payload, 201)`. The response is returned for further checks.
 */
export function caller(t: Pick<Test, 'equal'>, app: FastifyInstance) {
  return (headers: Record<string, string> = {}) => {
    const send = (
      method: 'GET' | 'POST' | 'PUT' | 'DELETE',
      url: string,
      status: number,
      payload: Payload,
      message?: string,
    ) => expectStatus(t, app, { method, url, headers, ...(payload === undefined ? {} : { payload }) }, status, message);
    return {
      get: (url: string, status: number, message?: string) => send('GET', url, status, undefined, message),
      delete: (url: string, status: number, message?: string) => send('DELETE', url, status, undefined, message),
      post: (url: string, payload: Payload, status: number, message?: string) =>
        send('POST', url, status, payload, message),
      put: (url: string, payload: Payload, status: number, message?: string) =>
        send('PUT', url, status, payload, message),
    };
  };
}

/**
 * The context a provider package gets when the app built it, for tests that build a provider themselves
 * beside an app serving both surfaces (the registry tools provider reaches that app's registry in process).
 */
export function providerContextOf(app: FastifyInstance): ProviderContext {
  return {
    store: app.sb.store,
    services: app.sb.services,
    surfaces: ['registry', 'platform'],
    dataDir: app.sb.settings.dataDir,
    logger: app.log,
    lookup: () => undefined,
  } as ProviderContext;
}
