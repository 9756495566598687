import type { FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';

/** Header and body fields whose values must never reach a log line. */
export const REDACT = [
  'req.headers.authorization',
  'req.headers["x-authorization"]',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'req.headers["x-body"]',
  'headers.authorization',
  '*.auth_credential',
  '*.password',
  '*.api_key',
  '*.client_secret',
  '*.secret',
  '*.token',
  '*.access_token',
  '*.refresh_token',
];

/** Headers that carry credentials by name; `X-Cred-*` (spec 5.5) and `X-Aws-*` carry them by prefix. */
const SECRET_HEADERS = new Set(['authorization', 'x-authorization', 'x-api-key', 'cookie', 'set-cookie', 'proxy-authorization', 'x-body']);
const SECRET_PREFIXES = ['x-cred-', 'x-aws-'];
/** Query parameters that carry credentials in URLs some clients build. */
const SECRET_QUERY = /([?&](?:api_key|apikey|token|access_token|key|password|secret|code)=)[^&]*/gi;

export function isSecretHeader(name: string): boolean {
  const n = name.toLowerCase();
  return SECRET_HEADERS.has(n) || SECRET_PREFIXES.some((p) => n.startsWith(p));
}

export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[redacted]');
}

/**
 * The request as logged: method, route-free URL with credential query values
 * masked, and the headers with every credential-bearing one masked. Headers
 * are useful when tracing a routing decision (X-Provider-*), so they are kept.
 */
export function serializeRequest(request: FastifyRequest) {
  const headers: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(request.headers ?? {})) headers[k] = isSecretHeader(k) ? '[redacted]' : v;
  return {
    method: request.method,
    url: redactUrl(request.url ?? ''),
    host: request.host,
    remoteAddress: request.ip,
    headers,
  };
}

export function loggerOptions(level: string, stream?: DestinationStream) {
  return {
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    serializers: { req: serializeRequest },
    ...(stream ? { stream } : {}),
  };
}
