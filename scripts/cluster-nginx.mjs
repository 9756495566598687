/**
 * The nginx.conf for a local cluster on loopback: nginx in the foreground with
 * everything (pid, logs, temp files) under one directory, round robin over the
 * given replica ports, and the proxy settings shipped in
 * deploy/nginx/switchboard-proxy.conf included as they are. Used by
 * `npm run cluster` (scripts/cluster.mjs) and test/cluster/cluster.ts.
 *
 * Plain JavaScript: scripts/cluster.mjs runs with node itself.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROXY_SNIPPET = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  'deploy',
  'nginx',
  'switchboard-proxy.conf',
);

/** Where Debian puts the binary; root's PATH has /usr/sbin, a user's often does not. */
export const NGINX_BIN = '/usr/sbin/nginx';

/**
 * @param {{ dir: string, port: number, upstreams: number[] }} opts
 * @returns {string}
 */
export function nginxConf({ dir, port, upstreams }) {
  const servers = upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n');
  // Run as root (the test machine), nginx would switch its worker to "nobody",
  // which cannot enter a private temp directory: keep the worker as the caller.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  return `${user}worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' '';
  }
  # keepalive is idle upstream connections kept per worker, shared by all the
  # servers: at 16, 20 client connections round-robined over 2 replicas opened
  # a new upstream connection for 7-11% of requests (1-replica: 3-4%); 64 covers
  # the bench's 40 connections and the tests' handfuls.
  upstream switchboard {
${servers}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      include ${PROXY_SNIPPET};
      proxy_pass http://switchboard;
    }
  }
}
`;
}
