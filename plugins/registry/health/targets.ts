import type { ServerRecord } from '../catalog/records.ts';
import type { ProbeTarget } from './probe.ts';

/**
 * Where a registered server speaks MCP. SSE servers (an `sse_endpoint`, or SSE
 * as their only transport) are reached at their SSE endpoint; everything else
 * over streamable HTTP at `mcp_endpoint`, or `<proxy_pass_url>/mcp`.
 */
export function mcpTarget(
  server: ServerRecord,
  backendHeaders: Record<string, string>,
): Omit<ProbeTarget, 'timeoutMs'> {
  const transports = server.supported_transports ?? [];
  const sseOnly = transports.length > 0 && transports.every((t) => t === 'sse');
  // Names folded to lower case so a custom header can never sit beside the credential header under another case (fetch would join the two values).
  const headers: Record<string, string> = {};
  for (const [k, v] of [...Object.entries(server.headers ?? {}), ...Object.entries(backendHeaders)])
    headers[k.toLowerCase()] = v;
  const base = server.proxy_pass_url.replace(/\/+$/, '');
  if (server.sse_endpoint || sseOnly) {
    const url = server.sse_endpoint
      ? new URL(server.sse_endpoint, `${base}/`).toString()
      : /\/sse$/.test(base)
        ? base
        : `${base}/sse`;
    return { url, transport: 'sse', headers };
  }
  const url = server.mcp_endpoint
    ? new URL(server.mcp_endpoint, `${base}/`).toString()
    : /\/mcp$/.test(base)
      ? base
      : `${base}/mcp`;
  return { url, transport: 'streamable-http', headers };
}
