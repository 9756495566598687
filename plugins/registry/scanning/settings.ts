import { Type, type Static } from '@sinclair/typebox';
import { StartupError } from '../../../core/errors.ts';
import { validateSection } from '../../../core/config.ts';

export type Subject = 'server' | 'agent' | 'skill';
export type OnScanFailure = 'block' | 'allow' | 'pending';

/** Per-subject scan settings after env, config and the spec's defaults (spec 4.10). */
export interface SubjectSettings {
  enabled: boolean;
  on_registration: boolean;
  block_unsafe: boolean;
  analyzers: string[];
  timeout_seconds: number;
  /** Servers always get the tag (spec 3); agents and skills follow *_ADD_PENDING_TAG. */
  add_pending_tag: boolean;
}

export interface ScanSettings {
  server: SubjectSettings;
  agent: SubjectSettings;
  skill: SubjectSettings;
  /** What a scan that fails or times out does to a registration (ANCHOR-FACTS: never silently safe). */
  on_scan_failure: OnScanFailure;
}

const Subject = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    on_registration: Type.Optional(Type.Boolean()),
    block_unsafe: Type.Optional(Type.Boolean()),
    analyzers: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 1 })), Type.String()])),
    timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    add_pending_tag: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** `registry.scanning` in the config file; the environment variables of spec 4.10 win over it. */
export const ScanningConfigSchema = Type.Object(
  {
    server: Type.Optional(Subject),
    agent: Type.Optional(Subject),
    skill: Type.Optional(Subject),
    on_scan_failure: Type.Optional(Type.Union([Type.Literal('block'), Type.Literal('allow'), Type.Literal('pending')])),
  },
  { additionalProperties: false },
);
type ScanningConfig = Static<typeof ScanningConfigSchema>;

const DEFAULTS: Record<Subject, SubjectSettings> = {
  server: {
    enabled: true,
    on_registration: true,
    block_unsafe: true,
    analyzers: ['yara'],
    timeout_seconds: 60,
    add_pending_tag: true,
  },
  agent: {
    enabled: true,
    on_registration: true,
    block_unsafe: true,
    analyzers: ['yara', 'spec'],
    timeout_seconds: 60,
    add_pending_tag: true,
  },
  skill: {
    enabled: true,
    on_registration: true,
    block_unsafe: true,
    analyzers: ['static'],
    timeout_seconds: 120,
    add_pending_tag: true,
  },
};

/** The spec's variable names per subject and setting. */
const ENV: Record<Subject, Partial<Record<keyof SubjectSettings, string>>> = {
  server: {
    enabled: 'SECURITY_SCAN_ENABLED',
    on_registration: 'SECURITY_SCAN_ON_REGISTRATION',
    block_unsafe: 'SECURITY_SCAN_BLOCK_UNSAFE_SERVERS',
    analyzers: 'SECURITY_ANALYZERS',
    timeout_seconds: 'SECURITY_SCAN_TIMEOUT',
  },
  agent: {
    enabled: 'AGENT_SECURITY_SCAN_ENABLED',
    on_registration: 'AGENT_SECURITY_SCAN_ON_REGISTRATION',
    block_unsafe: 'AGENT_SECURITY_BLOCK_UNSAFE_AGENTS',
    analyzers: 'AGENT_SECURITY_ANALYZERS',
    timeout_seconds: 'AGENT_SECURITY_SCAN_TIMEOUT',
    add_pending_tag: 'AGENT_SECURITY_ADD_PENDING_TAG',
  },
  skill: {
    enabled: 'SKILL_SECURITY_SCAN_ENABLED',
    on_registration: 'SKILL_SECURITY_SCAN_ON_REGISTRATION',
    block_unsafe: 'SKILL_SECURITY_BLOCK_UNSAFE_SKILLS',
    analyzers: 'SKILL_SECURITY_ANALYZERS',
    timeout_seconds: 'SKILL_SECURITY_SCAN_TIMEOUT',
    add_pending_tag: 'SKILL_SECURITY_ADD_PENDING_TAG',
  },
};

const bad = (name: string, what: string) =>
  new StartupError('SB_ERR_CONFIG_INVALID', `Invalid environment variable ${name}: ${what}`);

function envBool(name: string, v: string): boolean {
  const s = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off'].includes(s)) return false;
  throw bad(name, `'${v}' is not true or false`);
}

export const splitList = (v: string | string[]): string[] =>
  (Array.isArray(v) ? v : v.split(',')).map((x) => x.trim()).filter(Boolean);

function subject(kind: Subject, cfg: ScanningConfig[Subject], env: NodeJS.ProcessEnv): SubjectSettings {
  const out: SubjectSettings = { ...DEFAULTS[kind], ...cfg, analyzers: DEFAULTS[kind].analyzers };
  if (cfg?.analyzers !== undefined) out.analyzers = splitList(cfg.analyzers);
  for (const [key, name] of Object.entries(ENV[kind]) as Array<[keyof SubjectSettings, string]>) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    if (key === 'analyzers') out.analyzers = splitList(raw);
    else if (key === 'timeout_seconds') {
      const n = Number(raw);
      if (!Number.isFinite(n) || n <= 0) throw bad(name, `'${raw}' is not a positive number of seconds`);
      out.timeout_seconds = n;
    } else out[key] = envBool(name, raw);
  }
  if (kind === 'server') out.add_pending_tag = true;
  if (out.analyzers.length === 0) throw bad(ENV[kind].analyzers!, 'the analyzer list is empty');
  return out;
}

export function scanSettings(
  registrySection: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv,
): ScanSettings {
  const cfg = validateSection(ScanningConfigSchema, registrySection?.scanning ?? {}, 'registry.scanning');
  const failure = env.SECURITY_ON_SCAN_FAILURE || cfg.on_scan_failure || 'pending';
  if (!['block', 'allow', 'pending'].includes(failure))
    throw bad('SECURITY_ON_SCAN_FAILURE', `'${failure}' is not one of block, allow, pending`);
  return {
    server: subject('server', cfg.server, env),
    agent: subject('agent', cfg.agent, env),
    skill: subject('skill', cfg.skill, env),
    on_scan_failure: failure as OnScanFailure,
  };
}
