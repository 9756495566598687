#!/usr/bin/env -S npx tsx
import { parseArgs } from 'node:util';
import { isSwitchboardError, StartupError } from '../core/errors.ts';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildApp } from '../plugins/app.ts';
import { startBanner } from './start-banner.ts';

// Subcommands live in their own files; `switchboard scan` is the periodic security scan (spec 4.10.1).
if (process.argv[2] === 'scan') {
  const { runScanCli } = await import('./scan.ts');
  process.exit(await runScanCli(process.argv.slice(3)));
}

const started = performance.now();
const { values } = parseArgs({
  options: { surfaces: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  allowPositionals: false,
});

if (values.help) {
  console.log(`switchboard [--surfaces registry|platform|registry,platform]

Environment: PORT (7860), HOST (127.0.0.1), DATA_DIR (./data), LOG_LEVEL (info),
SWITCHBOARD_CONFIG (YAML or JSON config file), REDIS_URL (use Redis as the store).`);
  process.exit(0);
}

let surfaces: Array<'registry' | 'platform'> | undefined;
if (values.surfaces) {
  const list = values.surfaces.split(',').map((s) => s.trim());
  for (const s of list) {
    if (s !== 'registry' && s !== 'platform') {
      console.error(`--surfaces takes registry, platform or both (comma-separated); got '${s}'`);
      process.exit(2);
    }
  }
  surfaces = list as Array<'registry' | 'platform'>;
}

try {
  const startedAt = Date.now();
  const app = await buildApp({ surfaces });
  const { port, host } = app.sb.settings;
  // The generated keys are written while the plugins load; a file written since this start is new: say where
  // it is (never its content), as the admin password's line does.
  for (const f of ['encryption_key', 'secret_key']) {
    const file = join(app.sb.settings.dataDir, f);
    if (existsSync(file) && statSync(file).mtimeMs >= startedAt - 1000) {
      app.log.warn({ file }, `Generated ${f.toUpperCase()}; it is in this file (mode 0600): keep it and back it up`);
    }
  }
  await app.listen({ port, host });
  app.log.info(
    {
      ready_ms: Math.round(performance.now() - started),
      surfaces: app.sb.settings.surfaces,
      store: app.sb.store.backend,
    },
    'switchboard ready',
  );
  if (process.stdout.isTTY) process.stdout.write(startBanner(app));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      app.log.info({ signal: sig }, 'shutting down');
      app.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
} catch (err) {
  // Known startup failures get one line naming what to fix, not a stack trace.
  if (err instanceof StartupError || isSwitchboardError(err)) {
    console.error(`switchboard: ${err.code}: ${err.message}`);
    process.exit(1);
  }
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    console.error(`switchboard: cannot listen: ${(err as Error).message} (set PORT / HOST)`);
    process.exit(1);
  }
  throw err;
}
