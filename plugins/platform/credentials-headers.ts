import type { CallerCredentials } from '../../core/provider.ts';

/**
 * Pass-through credentials of spec 5.5: `X-Cred-{Service}-{Key}` and the cloud
 * headers. They are handed to providers per call and never stored or logged.
 */
export function callerCredentials(headers: Record<string, string | string[] | undefined>): CallerCredentials {
  const service: CallerCredentials['service'] = {};
  const cloud: NonNullable<CallerCredentials['cloud']> = {};
  for (const [name, raw] of Object.entries(headers)) {
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined) continue;
    const cred = /^x-cred-([a-z0-9]+)-(.+)$/.exec(name);
    if (cred) {
      (service[cred[1]] ??= {})[cred[2]] = value;
      continue;
    }
    const c = /^x-cloud-(access-key-id|secret-access-key|session-token|region)$/.exec(name);
    if (c) {
      const key = {
        'access-key-id': 'accessKeyId',
        'secret-access-key': 'secretAccessKey',
        'session-token': 'sessionToken',
        region: 'region',
      }[c[1]] as keyof typeof cloud;
      cloud[key] = value;
    }
  }
  return Object.keys(cloud).length ? { service, cloud } : { service };
}
