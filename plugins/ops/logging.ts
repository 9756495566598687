import type { FastifyReply, FastifyRequest } from 'fastify';
import { createRequire } from 'node:module';
import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';
import { StartupError } from '../../core/errors.ts';

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
const SECRET_HEADERS = new Set([
  'authorization',
  'x-authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'proxy-authorization',
  'x-body',
]);
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

/**
 * The process's logger. Switchboard owns it rather than letting Fastify make
 * one: a Fastify logger makes Fastify put a 'finish' and an 'error' listener
 * on every response (to log the completed request), and adding and removing
 * them was the largest single cost we added to a request. The completed line
 * is written by the metrics hook instead (ops/metrics.ts), only when `info` is
 * enabled. Serializers are Fastify's usual three, with credentials masked.
 */
/**
 * `LOG_FORMAT`: `json` (pino's lines, for machines) or `pretty` (pino-pretty, for a person at a terminal);
 * pretty by default when stdout is a TTY, JSON otherwise.
 */
export function logFormat(
  env: NodeJS.ProcessEnv = process.env,
  tty = Boolean(process.stdout.isTTY),
): 'json' | 'pretty' {
  const f = env.LOG_FORMAT?.trim().toLowerCase();
  if (!f) return tty ? 'pretty' : 'json';
  if (f === 'json' || f === 'pretty') return f;
  throw new StartupError(
    'SB_ERR_CONFIG_INVALID',
    `Invalid environment variable LOG_FORMAT: '${env.LOG_FORMAT}' is not one of json, pretty`,
  );
}

export function createRootLogger(level: string, stream?: DestinationStream): Logger {
  const opts = {
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    serializers: {
      req: serializeRequest,
      res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
      err: stdSerializers.err,
    },
  };
  if (stream) return pino(opts, stream);
  if (logFormat() === 'pretty') {
    // Loaded only when wanted; a synchronous stream in this thread, so the last lines before an exit are written.
    const pretty = createRequire(import.meta.url)('pino-pretty') as (o: Record<string, unknown>) => DestinationStream;
    return pino(
      opts,
      pretty({
        colorize: Boolean(process.stdout.isTTY),
        ignore: 'pid,hostname',
        translateTime: 'SYS:HH:MM:ss',
        sync: true,
      }),
    );
  }
  return pino(opts);
}

type Bindings = Record<string, unknown>;
type ChildOptions = { level?: string; [k: string]: unknown };
type LogFn = (...args: unknown[]) => void;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
interface PinoLike {
  level: string;
  child(bindings: Bindings, opts?: ChildOptions): PinoLike;
  isLevelEnabled(level: string): boolean;
  [level: string]: unknown;
}

/**
 * A request's logger, made on the first line actually written. Fastify gives
 * every request a pino child (bindings serialised, redaction set up) whether
 * or not anything is logged; at the usual `warn` level most requests log
 * nothing, and building the child was a visible share of a request's CPU. The
 * parent's level is checked per call, so a level change applies at once.
 */
class LazyChildLogger {
  private made?: PinoLike;

  constructor(
    private readonly parent: PinoLike,
    private readonly bindingsOf: Bindings,
    private readonly opts: ChildOptions,
  ) {}

  private real(): PinoLike {
    return (this.made ??= this.parent.child(this.bindingsOf, this.opts));
  }

  private write(level: Level, args: unknown[]): void {
    if (!this.made && !this.parent.isLevelEnabled(level)) return;
    const child = this.real();
    (child[level] as LogFn).apply(child, args);
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.made ? this.made.isLevelEnabled(level) : this.parent.isLevelEnabled(level);
  }

  bindings(): Bindings {
    return (this.real() as unknown as { bindings(): Bindings }).bindings();
  }

  child(bindings: Bindings, opts?: ChildOptions): PinoLike {
    return this.real().child(bindings, opts);
  }

  fatal(...args: unknown[]) {
    this.write('fatal', args);
  }
  error(...args: unknown[]) {
    this.write('error', args);
  }
  warn(...args: unknown[]) {
    this.write('warn', args);
  }
  info(...args: unknown[]) {
    this.write('info', args);
  }
  debug(...args: unknown[]) {
    this.write('debug', args);
  }
  trace(...args: unknown[]) {
    this.write('trace', args);
  }
  silent() {}
}

/**
 * Fastify's `childLoggerFactory`. Fastify runs without a logger of its own
 * (see createRootLogger), so the logger it passes in is its no-op one: every
 * request's logger is a lazy child of `root` instead, unless the route sets
 * its own log level (then the real child is needed to carry it).
 */
export function requestLoggerFactory(root: Logger) {
  const parent = root as unknown as PinoLike;
  return (_fastifyLogger: unknown, bindings: Bindings, opts: ChildOptions): unknown =>
    opts.level !== undefined ? parent.child(bindings, opts) : new LazyChildLogger(parent, bindings, opts);
}
