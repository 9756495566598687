import type { Readable } from 'node:stream';
import { Agent, errors, request } from 'undici';
import { gatewayTimeout, unavailable } from '../../../core/errors.ts';

/** What the proxy reads of a backend answer; the body stays a Node stream so it is piped, never buffered. */
export interface BackendResponse {
  status: number;
  ok: boolean;
  header(name: string): string | undefined;
  body: Readable;
  text(): Promise<string>;
}

// One keep-alive pool per process: the proxy's per-call cost is dominated by
// connection setup and WHATWG stream adapters otherwise (undici.request over fetch).
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });

/**
 * One HTTP exchange with a backend. `timeoutMs` bounds the wait for response
 * headers only: a streamed answer may run as long as the backend streams.
 */
export async function backendRequest(
  url: string,
  init: { method: 'GET' | 'POST' | 'DELETE'; headers: Record<string, string>; body?: string },
  timeoutMs: number,
  server: string,
): Promise<BackendResponse> {
  try {
    const res = await request(url, { method: init.method, headers: init.headers, body: init.body, dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: 0 });
    const header = (name: string) => {
      const v = res.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    return { status: res.statusCode, ok: res.statusCode >= 200 && res.statusCode < 300, header, body: res.body, text: () => res.body.text() };
  } catch (err) {
    if (err instanceof errors.HeadersTimeoutError || err instanceof errors.ConnectTimeoutError) {
      throw gatewayTimeout('SB_ERR_GATEWAY_TIMEOUT', `The backend of ${server} did not answer within ${timeoutMs} ms`, err);
    }
    const e = err as Error & { code?: string };
    throw unavailable('SB_ERR_GATEWAY_BACKEND_DOWN', `The backend of ${server} is unreachable (${e.code ?? e.message})`, err);
  }
}
