import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NGINX_BIN, nginxConf } from '../../scripts/cluster-nginx.mjs';
import { freePort } from '../fixtures/free-port.ts';
import { tempDir } from '../helpers/app.ts';

/**
 * A Switchboard cluster on loopback for tests: one redis-server (append-only
 * file on, fsync policy chosen by the test), N replicas started from the
 * sources (`node --import tsx bin/switchboard.ts`, one process each) and nginx
 * in front with the shipped proxy settings. Everything runs as a child of the
 * test and is stopped by PID at teardown, nginx with SIGTERM (its master then
 * stops its worker), the rest with SIGKILL. Each part logs into the cluster's
 * directory, which a failing test names.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START_DEADLINE_MS = 240_000; // tsx compiles the sources at start; on a loaded 2-core machine that is slow

export const ADMIN_PASSWORD = 'cluster-admin-password';
export const adminBasic = {
  authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`,
};

export interface ClusterOptions {
  replicas?: number;
  /** Redis `appendfsync`: `always` loses no acknowledged write on a crash; `everysec` up to about a second. */
  appendfsync?: 'always' | 'everysec';
  /** Written as the replicas' config file (SWITCHBOARD_CONFIG). */
  config?: Record<string, unknown>;
  /** Extra environment for every replica. */
  env?: Record<string, string>;
}

export interface Replica {
  index: number;
  port: number;
  base: string;
  child: ChildProcess;
  /** SIGKILL: the replica dies without closing anything, as a crashed host does. */
  kill(): Promise<void>;
}

export interface ClusterRedis {
  port: number;
  url: string;
  /** SIGKILL (a crash: only what the append-only file holds survives). */
  stop(): Promise<void>;
  /** Starts redis-server again at the same port on the same files. */
  start(): Promise<void>;
}

export interface Cluster {
  /** nginx's address: what clients use. */
  base: string;
  dir: string;
  replicas: Replica[];
  redis: ClusterRedis;
  stop(): Promise<void>;
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

async function stopChild(child: ChildProcess, sig: NodeJS.Signals): Promise<void> {
  if (!alive(child) || !child.pid) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(child.pid, sig);
  await exited;
}

function answersTcp(port: number): Promise<boolean> {
  return new Promise((res) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => (sock.destroy(), res(true)));
    sock.once('error', () => res(false));
  });
}

/** Redis PING until "+PONG" (not "-LOADING" while it replays its append-only file). */
function redisPong(port: number): Promise<boolean> {
  return new Promise((res) => {
    const sock = connect(port, '127.0.0.1');
    let got = '';
    sock.setTimeout(1000, () => (sock.destroy(), res(false)));
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n')) sock.destroy(), res(got.startsWith('+PONG'));
    });
    sock.once('error', () => res(false));
  });
}

async function until(what: string, check: () => Promise<boolean>, child: ChildProcess, log: string) {
  const end = Date.now() + START_DEADLINE_MS;
  while (Date.now() < end) {
    if (!alive(child)) throw new Error(`${what} exited during start; see ${log}`);
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not start within ${START_DEADLINE_MS} ms; see ${log}`);
}

const healthy = (base: string) => () =>
  fetch(`${base}/healthz`).then(
    (r) => r.ok,
    () => false,
  );

export async function startCluster(
  t: { teardown(fn: () => unknown): void },
  opts: ClusterOptions = {},
): Promise<Cluster> {
  const dir = tempDir('sb-cluster-');
  const children: ChildProcess[] = [];
  let nginx: ChildProcess | undefined;
  const stop = async () => {
    if (nginx) await stopChild(nginx, 'SIGTERM');
    await Promise.all(children.map((c) => stopChild(c, 'SIGKILL')));
  };
  t.teardown(stop);

  // Redis with its append-only file in the cluster's directory.
  const redisPort = await freePort();
  const redisDir = join(dir, 'redis');
  mkdirSync(redisDir);
  let redisChild: ChildProcess;
  const startRedis = async () => {
    const log = join(dir, 'redis.log');
    redisChild = spawn(
      'redis-server',
      [
        '--port',
        String(redisPort),
        '--bind',
        '127.0.0.1',
        '--dir',
        redisDir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        opts.appendfsync ?? 'everysec',
      ],
      { stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')] },
    );
    children.push(redisChild);
    await until('redis-server', () => redisPong(redisPort), redisChild, log);
  };
  await startRedis();
  const redis: ClusterRedis = {
    port: redisPort,
    url: `redis://127.0.0.1:${redisPort}`,
    stop: () => stopChild(redisChild, 'SIGKILL'),
    start: startRedis,
  };

  // Shared secrets: a token minted or a cookie set by one replica must verify on every other.
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HOST: '127.0.0.1',
    REDIS_URL: redis.url,
    SECRET_KEY: randomBytes(32).toString('base64url'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ADMIN_PASSWORD,
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    ...opts.env,
  };
  if (opts.config) {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify(opts.config));
    env.SWITCHBOARD_CONFIG = file;
  }

  const count = opts.replicas ?? 2;
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const replicas: Replica[] = ports.map((port, index) => {
    const dataDir = join(dir, `replica-${index}`);
    mkdirSync(dataDir);
    const log = join(dir, `replica-${index}.log`);
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bin/switchboard.ts')], {
      env: { ...env, PORT: String(port), DATA_DIR: dataDir },
      stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')],
      cwd: ROOT,
    });
    children.push(child);
    return { index, port, base: `http://127.0.0.1:${port}`, child, kill: () => stopChild(child, 'SIGKILL') };
  });
  // One at a time: both compiling at once on 2 busy cores only makes each slower.
  for (const r of replicas)
    await until(`replica ${r.index}`, healthy(r.base), r.child, join(dir, `replica-${r.index}.log`));

  const lbPort = await freePort();
  const nginxDir = join(dir, 'nginx');
  mkdirSync(nginxDir);
  const confFile = join(nginxDir, 'nginx.conf');
  writeFileSync(confFile, nginxConf({ dir: nginxDir, port: lbPort, upstreams: ports }));
  nginx = spawn(NGINX_BIN, ['-p', nginxDir, '-c', confFile], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${lbPort}`;
  await until('nginx', async () => (await answersTcp(lbPort)) && healthy(base)(), nginx, join(nginxDir, 'error.log'));
  return { base, dir, replicas, redis, stop };
}

/** The tail of a cluster part's log, for a failing assertion's message. */
export function logTail(dir: string, name: string, lines = 20): string {
  try {
    return readFileSync(join(dir, name), 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
