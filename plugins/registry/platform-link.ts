import type { FastifyInstance } from 'fastify';
import type { RegistryLink, RequestHeaders } from '../../core/registry-link.ts';
import { registryAuthOf } from './auth/index.ts';
import { mintSelfToken } from './auth/self-tokens.ts';

/** Never resolved or connected to: requests to it are dispatched inside this process. */
export const IN_PROCESS_BASE = 'http://registry.in-process';

/** Minted tokens live this long and are reused until a minute before they expire. */
const TOKEN_TTL_SECONDS = 600;
const TOKEN_CACHE_LIMIT = 1000;

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

function toHeaders(h: Record<string, string | string[] | number | undefined>): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) out.append(k, String(one));
  }
  return out;
}

/**
 * The registry link of this process (core/registry-link.ts): `fetch` becomes
 * `app.inject`, so a platform provider's request runs every hook and check of
 * the registry route it names (auth, scopes, the gateway's credential
 * injection) without a socket.
 */
export function inProcessRegistryLink(app: FastifyInstance): RegistryLink {
  const auth = registryAuthOf(app);
  const minted = new Map<string, { token: string; renewAt: number }>();

  return {
    baseUrl: IN_PROCESS_BASE,
    // A reload (another replica's write, seen by a request here) changes the catalog too.
    onServersChange: (fn) => {
      const offChange = app.catalog.servers.onChange(() => fn());
      const offReload = app.catalog.servers.index.onReload(fn);
      return () => {
        offChange();
        offReload();
      };
    },
    async fetch(url, init = {}) {
      const u = new URL(url, IN_PROCESS_BASE);
      const method = (init.method ?? 'GET').toUpperCase();
      // The MCP client's optional server-to-client GET stream never ends, and an
      // injected request answers only when its body ends; the client treats 405 as
      // "no such stream" and takes every answer on its POSTs instead.
      if (method === 'GET' && u.pathname.endsWith('/mcp')) return new Response(null, { status: 405 });
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((v, k) => {
        headers[k] = v;
      });
      const payload =
        typeof init.body === 'string'
          ? init.body
          : init.body == null
            ? undefined
            : Buffer.from(await new Response(init.body).arrayBuffer());
      const res = await app.inject({ method: method as 'GET', url: u.pathname + u.search, headers, payload });
      const noBody = res.statusCode === 204 || res.statusCode === 304 || method === 'HEAD';
      return new Response(noBody ? null : new Uint8Array(res.rawPayload), {
        status: res.statusCode,
        headers: toHeaders(res.headers),
      });
    },
    async callerToken(h: RequestHeaders) {
      for (const name of ['x-authorization', 'authorization']) {
        const raw = first(h[name]);
        if (!raw || !/^bearer /i.test(raw)) continue;
        const who = await auth.authenticator.identify({ authorization: raw });
        if (who.user) return raw.slice(7).trim();
      }
      return undefined;
    },
    async tokenFor(subject, scopes) {
      const key = `${subject}\n${[...scopes].sort().join(' ')}`;
      const hit = minted.get(key);
      if (hit && hit.renewAt > Date.now()) return hit.token;
      const token = await mintSelfToken(auth.authenticator.secretKey, {
        username: subject,
        groups: [],
        scopes,
        expiresInSeconds: TOKEN_TTL_SECONDS,
        description: 'platform tools caller',
      });
      if (minted.size >= TOKEN_CACHE_LIMIT) minted.delete(minted.keys().next().value as string);
      minted.set(key, { token, renewAt: Date.now() + (TOKEN_TTL_SECONDS - 60) * 1000 });
      return token;
    },
  };
}
