import { accessSync, constants } from 'node:fs';

/** The chromium provider's options (config `providers.browser.instances.<name>.options`). */
export interface ChromiumOptions {
  executablePath: string | undefined;
  maxSessions: number;
  idleTimeoutSeconds: number;
  navigationTimeoutMs: number;
  allowPrivateNetworks: boolean;
  allowedHosts: string[];
  blockedHosts: string[];
  /** Frames per second of the live view. */
  liveViewFps: number;
}

// Where Debian, Ubuntu and Google's packages put the binary.
const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The Chromium binary: option `executable_path`, else CHROMIUM_PATH, else the usual package locations. */
export function findChromium(explicit?: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = explicit ?? env.CHROMIUM_PATH;
  if (named) return executable(named) ? named : undefined;
  return CANDIDATES.find(executable);
}

function num(o: Record<string, unknown>, key: string, def: number, min: number, max: number): number {
  const v = o[key];
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw new Error(`option '${key}' must be a number from ${min} to ${max}`);
  }
  return v;
}

function hosts(o: Record<string, unknown>, key: string): string[] {
  const v = o[key];
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((h) => typeof h === 'string' && h.length > 0))
    throw new Error(`option '${key}' must be a list of host names`);
  return v.map((h: string) => h.toLowerCase());
}

export function parseOptions(o: Record<string, unknown>): ChromiumOptions {
  const path = o.executable_path;
  if (path !== undefined && typeof path !== 'string') throw new Error("option 'executable_path' must be a path");
  if (o.allow_private_networks !== undefined && typeof o.allow_private_networks !== 'boolean')
    throw new Error("option 'allow_private_networks' must be true or false");
  return {
    executablePath: findChromium(path),
    maxSessions: num(o, 'max_sessions', 8, 1, 1000),
    idleTimeoutSeconds: num(o, 'idle_timeout_seconds', 300, 1, 86400),
    navigationTimeoutMs: num(o, 'navigation_timeout_ms', 30000, 100, 120000),
    allowPrivateNetworks: o.allow_private_networks === true,
    allowedHosts: hosts(o, 'allowed_hosts'),
    blockedHosts: hosts(o, 'blocked_hosts'),
    liveViewFps: num(o, 'live_view_fps', 2, 0.2, 10),
  };
}
