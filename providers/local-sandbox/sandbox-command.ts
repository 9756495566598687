import { join } from 'node:path';
import type { SandboxOptions } from './options.ts';

export const DRIVERS_DIR = join(import.meta.dirname, 'drivers');
const DRIVERS_IN_SANDBOX = '/opt/switchboard';
const WORK_IN_SANDBOX = '/work';

export type Language = 'python' | 'javascript';

/** How to start one session's interpreter. */
export interface Launch {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The host uid/gid the sandbox runs as (set when Switchboard runs as root). */
  uid?: number;
  gid?: number;
}

/**
 * Resource limits of the interpreter process, set by prlimit before it starts. RLIMIT_NPROC counts every process
 * of the host uid, which is why each session gets a uid of its own when Switchboard can give one (as root).
 * V8 reserves address space far beyond what it uses, so node gets 1 GiB of headroom in RLIMIT_AS and its heap
 * is capped by --max-old-space-size instead.
 */
function limits(o: SandboxOptions, language: Language): string[] {
  const mb = 1024 * 1024;
  const as = (language === 'javascript' ? o.memoryMb + 1024 : o.memoryMb) * mb;
  return [
    `--as=${as}`,
    `--cpu=${o.cpuSeconds}`,
    `--nproc=${o.maxProcesses}`,
    `--fsize=${o.maxFileMb * mb}`,
    '--core=0',
  ];
}

function interpreter(o: SandboxOptions, language: Language, driversDir: string): string[] {
  if (language === 'python') return [o.pythonPath!, '-u', '-I', join(driversDir, 'python_driver.py')];
  return [o.nodePath!, `--max-old-space-size=${o.memoryMb}`, join(driversDir, 'js_driver.cjs')];
}

/**
 * The bubblewrap command line (`driversDir`: a copy of drivers/ the sandbox uid can read, see instance-dirs.ts): new user, PID, network, IPC and UTS namespaces (so no network at all, not even
 * loopback to Switchboard), the system folders read-only, a fresh /tmp, the session folder as the only writable
 * place, and nothing else of the host: not DATA_DIR, not /root, not /etc beyond what the loader needs.
 */
export function sandboxed(
  o: SandboxOptions,
  language: Language,
  sessionDir: string,
  driversDir: string,
  ids?: { uid: number; gid: number },
): Launch {
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--uid',
    '1000',
    '--gid',
    '1000',
    '--hostname',
    'sandbox',
    '--die-with-parent',
    // A new terminal session: code cannot push keystrokes into Switchboard's terminal (TIOCSTI).
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
    ...['/lib', '/lib64', '/bin', '/sbin'].flatMap((d) => ['--ro-bind-try', d, d]),
    ...['/etc/ld.so.cache', '/etc/alternatives', '/etc/localtime', '/etc/ssl'].flatMap((f) => ['--ro-bind-try', f, f]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--ro-bind',
    driversDir,
    DRIVERS_IN_SANDBOX,
    '--bind',
    sessionDir,
    WORK_IN_SANDBOX,
    '--chdir',
    WORK_IN_SANDBOX,
    // Inside, the environment is exactly this, whatever the parent passed (a spawn wrapper may add NODE_OPTIONS).
    '--clearenv',
    ...Object.entries(cleanEnv(WORK_IN_SANDBOX)).flatMap(([k, v]) => ['--setenv', k, v!]),
    '--',
    '/usr/bin/prlimit',
    ...limits(o, language),
    '--',
    ...interpreter(o, language, DRIVERS_IN_SANDBOX),
  ];
  return { command: o.bwrapPath!, args, cwd: '/', env: cleanEnv(WORK_IN_SANDBOX), ...ids };
}

/** No sandbox (option allow_unsandboxed): the same limits, the session folder as working directory, and nothing else. */
export function unsandboxed(o: SandboxOptions, language: Language, sessionDir: string): Launch {
  const env = Object.entries(cleanEnv(sessionDir)).map(([k, v]) => `${k}=${v}`);
  return {
    command: '/usr/bin/env',
    args: ['-i', ...env, '/usr/bin/prlimit', ...limits(o, language), '--', ...interpreter(o, language, DRIVERS_DIR)],
    cwd: sessionDir,
    env: cleanEnv(sessionDir),
  };
}

/** The interpreter sees none of Switchboard's environment (keys, tokens, REDIS_URL). */
function cleanEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1' };
}
