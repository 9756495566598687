#!/usr/bin/env node
/**
 * `npm run cluster`: a local trial of the multi-replica deployment on
 * loopback. redis-server with its append-only file on (unless REDIS_URL names
 * a Redis already running), N replicas of the bundled service (dist/, built
 * first as `npm start` does) and nginx in front with deploy/nginx's proxy
 * settings. Ctrl-C (or SIGTERM) stops every process this script started, by
 * PID. Everything lives under $CLUSTER_DIR (default ./data/cluster).
 *
 * Environment: CLUSTER_PORT (nginx, 8080), CLUSTER_REPLICAS (2),
 * CLUSTER_FIRST_PORT (7861: replicas on 7861, 7862, ...), CLUSTER_REDIS_PORT
 * (6390), REDIS_URL (use that Redis instead of starting one), CLUSTER_DIR.
 *
 * Plain JavaScript: it runs with node itself, before anything is compiled.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDist } from './build.mjs';
import { NGINX_BIN, nginxConf } from './cluster-nginx.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const dir = resolve(env.CLUSTER_DIR || join(root, 'data', 'cluster'));
const lbPort = Number(env.CLUSTER_PORT || 8080);
const count = Number(env.CLUSTER_REPLICAS || 2);
const firstPort = Number(env.CLUSTER_FIRST_PORT || 7861);
const redisPort = Number(env.CLUSTER_REDIS_PORT || 6390);
mkdirSync(dir, { recursive: true });

/** One secret per cluster, kept in $CLUSTER_DIR (mode 0600): every replica must use the same. */
function secret(name, make) {
  const file = join(dir, name);
  if (!existsSync(file)) writeFileSync(file, make(), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

const children = [];
let stopping = false;
async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  // nginx first (no new requests), then the replicas, Redis last so their writes land.
  for (const c of [...children].reverse()) {
    if (c.exitCode !== null || c.signalCode !== null || !c.pid) continue;
    const exited = new Promise((r) => c.once('exit', r));
    process.kill(c.pid, 'SIGTERM');
    await exited;
  }
  process.exit(code);
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

function start(name, cmd, args, extraEnv = {}) {
  const log = join(dir, `${name}.log`);
  const child = spawn(cmd, args, {
    env: { ...env, ...extraEnv },
    stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')],
    cwd: root,
  });
  child.once('exit', (code, sig) => {
    if (stopping) return;
    console.error(`cluster: ${name} exited (${sig ?? code}); see ${log}. Stopping the rest.`);
    stopAll(1);
  });
  children.push(child);
  return child;
}

async function waitFor(name, check) {
  for (let i = 0; i < 1200 && !stopping; i++) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  console.error(`cluster: ${name} did not come up; see ${join(dir, `${name}.log`)}`);
  await stopAll(1);
}
const healthy = (url) => () => fetch(`${url}/healthz`).then((r) => r.ok);

if (!(await buildDist(join(root, 'dist')))) process.exit(1);

let redisUrl = env.REDIS_URL;
if (!redisUrl) {
  mkdirSync(join(dir, 'redis'), { recursive: true });
  // AOF with fsync every second: at most about one second of acknowledged writes is lost
  // on a power cut (docs/deployment.md); `always` loses none at a cost per write.
  start('redis', 'redis-server', [
    '--port',
    String(redisPort),
    '--bind',
    '127.0.0.1',
    '--dir',
    join(dir, 'redis'),
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
  ]);
  redisUrl = `redis://127.0.0.1:${redisPort}`;
  const { connect } = await import('node:net');
  await waitFor(
    'redis',
    () =>
      new Promise((res) => {
        const s = connect(redisPort, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          res(true);
        });
        s.once('error', () => res(false));
      }),
  );
}

const shared = {
  HOST: '127.0.0.1',
  REDIS_URL: redisUrl,
  SECRET_KEY: secret('secret_key', () => randomBytes(32).toString('base64url')),
  ENCRYPTION_KEY: secret('encryption_key', () => randomBytes(32).toString('base64')),
  ADMIN_PASSWORD: secret('admin_password', () => randomBytes(18).toString('base64url')),
  LOG_FORMAT: env.LOG_FORMAT || 'json',
};
const ports = Array.from({ length: count }, (_, i) => firstPort + i);
for (const [i, port] of ports.entries()) {
  const dataDir = join(dir, `replica-${i + 1}`);
  mkdirSync(dataDir, { recursive: true });
  start(`replica-${i + 1}`, process.execPath, [join(root, 'dist', 'switchboard.js')], {
    ...shared,
    PORT: String(port),
    DATA_DIR: dataDir,
  });
  await waitFor(`replica-${i + 1}`, healthy(`http://127.0.0.1:${port}`));
}

const nginxDir = join(dir, 'nginx');
mkdirSync(nginxDir, { recursive: true });
const conf = join(nginxDir, 'nginx.conf');
writeFileSync(conf, nginxConf({ dir: nginxDir, port: lbPort, upstreams: ports }));
start('nginx', NGINX_BIN, ['-p', nginxDir, '-c', conf]);
await waitFor('nginx', healthy(`http://127.0.0.1:${lbPort}`));

console.log(`cluster: http://127.0.0.1:${lbPort} -> replicas on ${ports.join(', ')}, store ${redisUrl}`);
console.log(`cluster: admin password in ${join(dir, 'admin_password')}; logs in ${dir}; Ctrl-C stops it all`);
