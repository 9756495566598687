import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PROVIDER_KINDS } from '../core/primitives.ts';

/**
 * The few lines a person at a terminal needs after `npm start`: where to go, where the admin password is, what
 * runs, what to try next. Only on a TTY (machines read the JSON log); never a secret, only file names.
 */
export function startBanner(app: FastifyInstance): string {
  const { settings, store, providers } = app.sb;
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : settings.port;
  const host = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const registry = settings.surfaces.includes('registry');
  const platform = settings.surfaces.includes('platform');
  const passwordFile = join(settings.dataDir, 'admin_password');
  const lines = [
    '',
    `Switchboard is ready at ${base}`,
    `  Console     ${base}/`,
    `  API docs    ${base}/docs`,
    ...(registry ? [`  Registry    ${base}/api/`] : []),
    ...(platform ? [`  Platform    ${base}/api/v1`] : []),
    ...(registry
      ? [
          process.env.ADMIN_PASSWORD || !existsSync(passwordFile)
            ? '  Admin       the ADMIN_USER / ADMIN_PASSWORD you set'
            : `  Admin       user admin, password in ${passwordFile}`,
        ]
      : []),
    `  Store       ${store.backend}${store.backend === 'sqlite' ? ` under ${settings.dataDir}` : ''}`,
    `  Providers   ${PROVIDER_KINDS.filter((k) => providers.names(k).length)
      .map((k) => `${k}=${providers.defaultName(k)}`)
      .join(' ')}`,
    '',
    'Next: open the console, or try',
    `  curl -s ${base}/api/v1/providers`,
    "  and the README's First calls; LOG_FORMAT=json for machine logs, Ctrl-C to stop.",
    '',
  ];
  return `${lines.join('\n')}\n`;
}
