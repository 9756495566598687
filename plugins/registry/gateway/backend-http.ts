import type { Readable } from 'node:stream';
import { Pool, errors, type Dispatcher, type buildConnector } from 'undici';
import { addressRefusal } from '../../../core/address-guard.ts';
import { badGateway, forbidden, gatewayTimeout, unavailable } from '../../../core/errors.ts';

/** What the proxy reads of a backend answer; the body stays a Node stream so it is piped, never buffered. */
export interface BackendResponse {
  status: number;
  ok: boolean;
  header(name: string): string | undefined;
  body: Readable;
  text(): Promise<string>;
  /** The whole body as bytes (for complete, length-delimited answers only). */
  bytes(): Promise<Buffer>;
}

/**
 * One keep-alive pool per backend origin, used directly: undici's top-level
 * request() parses the URL and goes through Agent's origin lookup and redirect
 * interceptor on every call, all of it per-request CPU on the gateway's hot
 * path. (Without that interceptor a backend's redirect comes back as a 3xx,
 * which the proxy refuses: it is never followed.) Every pool connects through
 * `connect`, the address guard's pinned connector, so the address a connection
 * reaches is judged when it is opened.
 */
export class BackendPools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly connect?: buildConnector.connector) {}

  get(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      if (this.pools.size >= MAX_POOLS) {
        const [oldest, p] = this.pools.entries().next().value as [string, Pool];
        this.pools.delete(oldest);
        void p.close();
      }
      pool = new Pool(origin, {
        connections: 256,
        keepAliveTimeout: 30_000,
        pipelining: 1,
        ...(this.connect ? { connect: this.connect } : {}),
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** At app close: destroyed, not closed, since close() would wait for SSE streams that only end when a side hangs up. */
  async close(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.allSettled(all.map((p) => p.destroy()));
  }
}

// Backends are registered servers, so origins are few; the bound only guards
// against a catalog churning through many, and close() lets in-flight calls finish.
const MAX_POOLS = 512;

// The same few backend URLs come back on every call; parsing each once keeps new URL() off the hot path.
const targets = new Map<string, { origin: string; path: string }>();

function target(url: string): { origin: string; path: string } {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    t = { origin: u.origin, path: `${u.pathname}${u.search}` };
    if (targets.size >= 10_000) targets.clear();
    targets.set(url, t);
  }
  return t;
}

/**
 * One HTTP exchange with a backend. `timeoutMs` bounds the wait for response
 * headers only: a streamed answer may run as long as the backend streams.
 */
export async function backendRequest(
  pools: BackendPools,
  url: string,
  init: { method: 'GET' | 'POST' | 'DELETE'; headers: Record<string, string>; body?: string },
  timeoutMs: number,
  server: string,
): Promise<BackendResponse> {
  let res: Dispatcher.ResponseData;
  try {
    const { origin, path } = target(url);
    res = await pools.get(origin).request({
      path,
      method: init.method,
      headers: init.headers,
      body: init.body,
      headersTimeout: timeoutMs,
      bodyTimeout: 0,
    });
  } catch (err) {
    if (err instanceof errors.HeadersTimeoutError || err instanceof errors.ConnectTimeoutError) {
      throw gatewayTimeout(
        'SB_ERR_GATEWAY_TIMEOUT',
        `The backend of ${server} did not answer within ${timeoutMs} ms`,
        err,
      );
    }
    const refused = addressRefusal(err);
    if (refused) {
      throw forbidden(
        'SB_ERR_GATEWAY_BLOCKED_ADDRESS',
        `The backend of ${server} resolves to a ${refused.addressClass} address (${refused.host}), which is refused; an administrator must point it elsewhere (or set registry.allow_link_local_backends)`,
      );
    }
    const e = err as Error & { code?: string };
    throw unavailable(
      'SB_ERR_GATEWAY_BACKEND_DOWN',
      `The backend of ${server} is unreachable (${e.code ?? e.message})`,
      err,
    );
  }
  const { headers, body } = res;
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  return {
    status: res.statusCode,
    ok: res.statusCode >= 200 && res.statusCode < 300,
    header,
    body,
    text: () => body.text(),
    bytes: async () => {
      try {
        return Buffer.from(await body.arrayBuffer());
      } catch (err) {
        throw badGateway(
          'SB_ERR_GATEWAY_BACKEND_BROKEN',
          `The backend of ${server} broke off its answer (${(err as Error).message})`,
          err,
        );
      }
    },
  };
}
