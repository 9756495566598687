import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import YAML from 'yaml';
import { StartupError } from './errors.ts';
import { PROVIDER_KINDS } from './primitives.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

const Instance = Type.Object(
  {
    type: Type.String({ minLength: 1, description: 'Provider factory type, e.g. keyv, openai' }),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

const KindConfig = Type.Object(
  {
    default: Type.Optional(Type.String({ minLength: 1 })),
    /** Refuse X-Provider header overrides (and agent provider_overrides) for this primitive. */
    locked: Type.Optional(Type.Boolean()),
    instances: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.-]+$' }), Instance)),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    host: Type.Optional(Type.String()),
    data_dir: Type.Optional(Type.String()),
    log_level: Type.Optional(Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)))),
    surfaces: Type.Optional(
      Type.Array(Type.Union([Type.Literal('registry'), Type.Literal('platform')]), { minItems: 1 }),
    ),
    body_limit_bytes: Type.Optional(Type.Integer({ minimum: 1024 })),
    /** Shape limits on JSON bodies and JSON form fields (plugins/json-limits.ts): over them is a 422. Capped so a value within them never overflows a recursive walker. */
    json_limits: Type.Optional(
      Type.Object(
        {
          max_depth: Type.Optional(Type.Integer({ minimum: 2, maximum: 256 })),
          max_object_keys: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    store: Type.Optional(
      Type.Object(
        {
          backend: Type.Optional(Type.Union([Type.Literal('sqlite'), Type.Literal('redis'), Type.Literal('memory')])),
          url: Type.Optional(Type.String()),
          /** Redis: the most one store call waits for an answer before it is a 503 (a frozen Redis must not hang requests). */
          command_timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** Extra provider package folders, absolute or relative to the config file. */
    provider_packages: Type.Optional(Type.Array(Type.String())),
    providers: Type.Optional(
      Type.Partial(Type.Object(Object.fromEntries(PROVIDER_KINDS.map((k) => [k, KindConfig]))), {
        additionalProperties: false,
      }),
    ),
    metadata_denylists: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
    /** Platform (/api/v1) authentication; validated by the platform auth plugin. */
    auth: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** Registry settings; validated by the registry plugins. */
    registry: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** Platform settings beyond providers and auth; validated by the platform plugins. */
    platform: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type Config = Static<typeof ConfigSchema>;

/** Settings after env and defaults are applied: what the rest of the process reads. */
export interface Settings {
  config: Config;
  /** Directory of the config file, for resolving relative paths in it. */
  configDir: string;
  port: number;
  host: string;
  dataDir: string;
  logLevel: string;
  surfaces: Array<'registry' | 'platform'>;
  store: { backend: 'sqlite' | 'redis' | 'memory'; url?: string; commandTimeoutMs?: number };
}

/** `${VAR}` and `${VAR:-fallback}` in any string value; an unset VAR without fallback is an error. */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback?: string) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      throw new StartupError(
        'SB_ERR_CONFIG_INVALID',
        `Config key '${path || '(root)'}' refers to environment variable ${name}, which is not set`,
      );
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandEnv(v, env, path ? `${path}.${k}` : k)]));
  }
  return value;
}

/** Validate a config section and throw a StartupError naming the first failing key. */
export function validateSection<T extends TSchema>(schema: T, value: unknown, prefix: string): Static<T> {
  const withDefaults = Value.Default(schema, structuredClone(value ?? {}));
  const first = Value.Errors(schema, withDefaults).First();
  if (first) {
    const key = [prefix, ...first.path.split('/').filter(Boolean)].filter(Boolean).join('.');
    throw new StartupError('SB_ERR_CONFIG_INVALID', `Invalid config key '${key || '(root)'}': ${first.message}`);
  }
  return withDefaults as Static<T>;
}

export function parseConfigText(text: string, file: string): unknown {
  try {
    return file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text);
  } catch (err) {
    throw new StartupError(
      'SB_ERR_CONFIG_UNREADABLE',
      `Config file ${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message}`,
      err,
    );
  }
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** A config object given directly (tests); takes the place of SWITCHBOARD_CONFIG. */
  config?: unknown;
  surfaces?: Array<'registry' | 'platform'>;
}

export function loadSettings(opts: LoadOptions = {}): Settings {
  const env = opts.env ?? process.env;
  let raw: unknown = opts.config ?? {};
  let configDir = process.cwd();
  const file = opts.config === undefined ? env.SWITCHBOARD_CONFIG : undefined;
  if (file) {
    const path = resolve(file);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new StartupError(
        'SB_ERR_CONFIG_UNREADABLE',
        `Cannot read config file ${path}: ${(err as Error).message}`,
        err,
      );
    }
    raw = parseConfigText(text, path) ?? {};
    configDir = resolve(path, '..');
  }
  const config = withEnvLlmInstances(validateSection(ConfigSchema, expandEnv(raw, env), ''), env);
  const redisUrl = config.store?.url || env.REDIS_URL || undefined;
  const backend = config.store?.backend ?? (redisUrl ? 'redis' : 'sqlite');
  const logLevel = env.LOG_LEVEL || config.log_level || 'info';
  if (!LOG_LEVELS.includes(logLevel))
    throw new StartupError(
      'SB_ERR_CONFIG_INVALID',
      `Invalid environment variable LOG_LEVEL: '${logLevel}' is not one of ${LOG_LEVELS.join(', ')}`,
    );
  return {
    config,
    configDir,
    port: env.PORT ? envPort(env.PORT) : (config.port ?? 7860),
    host: env.HOST || config.host || '127.0.0.1',
    dataDir: resolve(configDirFor(env.DATA_DIR ? undefined : config.data_dir, configDir) ?? env.DATA_DIR ?? 'data'),
    logLevel,
    surfaces: opts.surfaces ?? config.surfaces ?? ['registry', 'platform'],
    store: { backend, url: redisUrl, commandTimeoutMs: config.store?.command_timeout_ms },
  };
}

/**
 * Users of other gateways expect `OPENAI_API_KEY` (or `OPENAI_BASE_URL`) and `ANTHROPIC_API_KEY` alone to switch
 * the matching LLM on. When the config lists no llm instances, each such variable adds an instance named after
 * its provider type beside `noop`, and the first of them (openai, then anthropic) becomes the default unless the
 * config names one. The providers read their key and address from the environment themselves, so no secret is
 * copied into the config. A config that lists llm instances is left as it is.
 */
export function withEnvLlmInstances(config: Config, env: NodeJS.ProcessEnv): Config {
  const llm = config.providers?.llm;
  if (llm?.instances) return config;
  const fromEnv = [
    ['openai', Boolean(env.OPENAI_API_KEY || env.OPENAI_BASE_URL)],
    ['anthropic', Boolean(env.ANTHROPIC_API_KEY)],
  ].flatMap(([type, on]) => (on ? [type as string] : []));
  if (fromEnv.length === 0) return config;
  const instances = Object.fromEntries([['noop', { type: 'noop' }], ...fromEnv.map((type) => [type, { type }])]);
  return {
    ...config,
    providers: { ...config.providers, llm: { ...llm, instances, default: llm?.default ?? fromEnv[0] } },
  };
}

/** A data_dir from the config file is relative to that file, like provider_packages. */
function configDirFor(dir: string | undefined, configDir: string): string | undefined {
  return dir === undefined ? undefined : resolve(configDir, dir);
}

function envPort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new StartupError(
      'SB_ERR_CONFIG_INVALID',
      `Invalid environment variable PORT: '${value}' is not a port number (0-65535)`,
    );
  }
  return n;
}
