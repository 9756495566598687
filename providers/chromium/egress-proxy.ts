import { lookup } from 'node:dns/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, isIP, type AddressInfo, type Socket } from 'node:net';
import { classifyIp, type AddressClass } from '../../core/address-guard.ts';

/** Which hosts the browser may reach. */
export interface EgressPolicy {
  /** Loopback, private, link-local and metadata addresses are refused unless this is set. */
  allowPrivateNetworks: boolean;
  /** When non-empty, only these hosts (exact, or `.example.com` for a domain and its subdomains); named hosts may be private. */
  allowedHosts: readonly string[];
  /** Always refused. Same forms as allowedHosts. */
  blockedHosts: readonly string[];
}

/** Refusals are counted so tests and operators can see the guard at work. */
export interface EgressProxy {
  /** `http://127.0.0.1:<port>`, for Chromium's --proxy-server. */
  readonly url: string;
  readonly refused: number;
  close(): Promise<void>;
}

/** The header on a refusal answer, so navigate() can tell the user why a page did not load. */
export const REFUSAL_HEADER = 'x-switchboard-egress-refused';

const REFUSED_CLASSES: readonly AddressClass[] = ['metadata', 'link-local', 'loopback', 'private'];

const matches = (host: string, patterns: readonly string[]) =>
  patterns.some((p) => (p.startsWith('.') ? host === p.slice(1) || host.endsWith(p) : host === p.toLowerCase()));

type Decision = { ok: true; address: string } | { ok: false; reason: string };

/**
 * Decide on the addresses a host resolves to, and return the one to connect to, so the
 * connection goes to exactly the address that was checked (no second lookup to rebind).
 */
export async function decide(hostRaw: string, policy: EgressPolicy): Promise<Decision> {
  const host = hostRaw
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (matches(host, policy.blockedHosts)) return { ok: false, reason: `host '${host}' is in blocked_hosts` };
  const named = policy.allowedHosts.length > 0 && matches(host, policy.allowedHosts);
  if (policy.allowedHosts.length > 0 && !named) return { ok: false, reason: `host '${host}' is not in allowed_hosts` };
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return { ok: false, reason: `host '${host}' does not resolve` };
    }
  }
  if (!policy.allowPrivateNetworks && !named) {
    for (const a of addresses) {
      const cls = classifyIp(a);
      if (REFUSED_CLASSES.includes(cls))
        return { ok: false, reason: `host '${host}' resolves to ${a}, a ${cls} address` };
    }
  }
  return addresses[0] ? { ok: true, address: addresses[0] } : { ok: false, reason: `host '${host}' has no address` };
}

function refuse(res: ServerResponse, reason: string): void {
  const body = `Switchboard refused this request: ${reason}\n`;
  res.writeHead(403, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    [REFUSAL_HEADER]: reason.slice(0, 300),
  });
  res.end(body);
}

// Hop-by-hop headers a forward proxy must not pass on (RFC 9110 7.6.1).
const HOP = new Set([
  'proxy-connection',
  'proxy-authorization',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
]);

/**
 * A forward proxy on loopback that every request of the browser goes through (plain HTTP and
 * CONNECT tunnels alike, redirect hops included, since each hop is a new request). It is the
 * one place egress is decided: request interception in the page cannot see redirect hops.
 */
export async function startEgressProxy(
  policy: EgressPolicy,
  onRefuse: (target: string, reason: string) => void,
): Promise<EgressProxy> {
  let refused = 0;
  const denied = (target: string, reason: string) => {
    refused++;
    onRefuse(target, reason);
  };
  const sockets = new Set<Socket>();

  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      return refuse(res, 'the proxy takes absolute http URLs only');
    }
    if (target.protocol !== 'http:') return refuse(res, `scheme '${target.protocol}' is not allowed`);
    const d = await decide(target.hostname, policy);
    if (!d.ok) {
      denied(target.href, d.reason);
      return refuse(res, d.reason);
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
    const upstream = httpRequest(
      {
        host: d.address,
        port: Number(target.port || 80),
        method: req.method,
        path: target.pathname + target.search,
        headers,
        setHost: false,
      },
      (up) => {
        const out: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
        res.writeHead(up.statusCode ?? 502, out);
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`upstream error: ${err.message}\n`);
    });
    req.pipe(upstream);
  });

  server.on('connect', async (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const [host, portText] = splitHostPort(req.url ?? '');
    const port = Number(portText);
    if (!host || !Number.isInteger(port) || port < 1 || port > 65535) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const d = await decide(host, policy);
    if (!d.ok) {
      denied(`${host}:${port}`, d.reason);
      client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSAL_HEADER}: ${d.reason.slice(0, 300)}\r\n\r\n`);
      return;
    }
    const upstream = connect(port, d.address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** `host:port` and `[v6]:port` as CONNECT sends them. */
function splitHostPort(authority: string): [string, string] {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(authority) ?? /^([^:]+):(\d+)$/.exec(authority);
  return m ? [m[1]!, m[2]!] : ['', ''];
}
