import { accessSync, constants } from 'node:fs';

/** Options of the `local` code interpreter (config `providers.code_interpreter.instances.<name>.options`). */
export interface SandboxOptions {
  bwrapPath: string | undefined;
  allowUnsandboxed: boolean;
  pythonPath: string | undefined;
  nodePath: string | undefined;
  memoryMb: number;
  /** CPU seconds per interpreter process (its whole life, across cells). */
  cpuSeconds: number;
  maxProcesses: number;
  maxFileMb: number;
  timeoutSeconds: number;
  maxTimeoutSeconds: number;
  maxOutputBytes: number;
  maxSessions: number;
  idleTimeoutSeconds: number;
}

const runnable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const first = (paths: string[]) => paths.find(runnable);

/** bubblewrap, where Debian's package puts it. */
export const findBwrap = (explicit?: string) =>
  first(explicit ? [explicit] : ['/usr/bin/bwrap', '/usr/local/bin/bwrap']);

function num(o: Record<string, unknown>, key: string, def: number, min: number, max: number): number {
  const v = o[key];
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
    throw new Error(`option '${key}' must be a number from ${min} to ${max}`);
  return v;
}

function path(o: Record<string, unknown>, key: string): string | undefined {
  const v = o[key];
  if (v !== undefined && typeof v !== 'string') throw new Error(`option '${key}' must be a path`);
  return v;
}

export function parseOptions(o: Record<string, unknown>): SandboxOptions {
  if (o.allow_unsandboxed !== undefined && typeof o.allow_unsandboxed !== 'boolean')
    throw new Error("option 'allow_unsandboxed' must be true or false");
  const timeoutSeconds = num(o, 'timeout_seconds', 30, 1, 3600);
  // System interpreters, not a user's pyenv or nvm shim: the sandbox binds only system folders.
  const py = path(o, 'python_path');
  const js = path(o, 'node_path');
  return {
    bwrapPath: findBwrap(path(o, 'bwrap_path')),
    allowUnsandboxed: o.allow_unsandboxed === true,
    pythonPath: first(py ? [py] : ['/usr/bin/python3', '/usr/local/bin/python3']),
    nodePath: first(js ? [js] : ['/usr/bin/node', '/usr/local/bin/node', process.execPath]),
    memoryMb: num(o, 'memory_mb', 512, 64, 65536),
    cpuSeconds: num(o, 'cpu_seconds', 300, 1, 86400),
    maxProcesses: num(o, 'max_processes', 64, 4, 4096),
    maxFileMb: num(o, 'max_file_mb', 100, 1, 65536),
    timeoutSeconds,
    maxTimeoutSeconds: num(o, 'max_timeout_seconds', Math.max(300, timeoutSeconds), timeoutSeconds, 86400),
    maxOutputBytes: num(o, 'max_output_bytes', 1024 * 1024, 1024, 256 * 1024 * 1024),
    maxSessions: num(o, 'max_sessions', 16, 1, 10000),
    idleTimeoutSeconds: num(o, 'idle_timeout_seconds', 900, 1, 86400),
  };
}
