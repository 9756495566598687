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
  /** Contexts with a page made ahead of time, so a session start does not wait for a renderer. */
  poolSize: number;
  /** Launch Chromium when the provider starts rather than on the first session. */
  launchAtStart: boolean;
}

// Where Debian, Ubuntu and Google's packages put the binary. Debian's chromium-headless-shell comes first: it is
// the same engine without the browser UI, and the full browser's headless mode opens UI renderers (the omnibox
// popup) for every context, which made a session start ~5x slower and an idle session ~4x bigger (docs/browser.md,
// "Performance"). Its real path, not the /usr/bin wrapper: that wrapper does not exec, so a shell would sit between
// us and Chromium (a signal to the process we started would reach the shell, not the browser).
const CANDIDATES = [
  '/usr/lib/chromium/chromium-headless-shell',
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

function int(o: Record<string, unknown>, key: string, def: number, min: number, max: number): number {
  const v = num(o, key, def, min, max);
  if (!Number.isInteger(v)) throw new Error(`option '${key}' must be a whole number from ${min} to ${max}`);
  return v;
}

function hosts(o: Record<string, unknown>, key: string): string[] {
  const v = o[key];
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((h) => typeof h === 'string' && h.length > 0))
    throw new Error(`option '${key}' must be a list of host names`);
  return v.map((h: string) => h.toLowerCase());
}

function bool(o: Record<string, unknown>, key: string): boolean {
  const v = o[key];
  if (v !== undefined && typeof v !== 'boolean') throw new Error(`option '${key}' must be true or false`);
  return v === true;
}

export function parseOptions(o: Record<string, unknown>): ChromiumOptions {
  const path = o.executable_path;
  if (path !== undefined && typeof path !== 'string') throw new Error("option 'executable_path' must be a path");
  return {
    executablePath: findChromium(path),
    maxSessions: num(o, 'max_sessions', 8, 1, 1000),
    idleTimeoutSeconds: num(o, 'idle_timeout_seconds', 300, 1, 86400),
    navigationTimeoutMs: num(o, 'navigation_timeout_ms', 30000, 100, 120000),
    allowPrivateNetworks: bool(o, 'allow_private_networks'),
    allowedHosts: hosts(o, 'allowed_hosts'),
    blockedHosts: hosts(o, 'blocked_hosts'),
    liveViewFps: num(o, 'live_view_fps', 2, 0.2, 10),
    poolSize: int(o, 'pool_size', 1, 0, 16),
    launchAtStart: bool(o, 'launch_at_start'),
  };
}
