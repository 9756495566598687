export const PROXY_SNIPPET: string;
export const NGINX_BIN: string;
export function nginxConf(opts: { dir: string; port: number; upstreams: number[] }): string;
