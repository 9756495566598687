import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
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
