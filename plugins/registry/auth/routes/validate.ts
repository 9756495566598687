import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { deepFreeze } from '../../../../core/deep-frozen.ts';
import { SwitchboardError, forbidden } from '../../../../core/errors.ts';
import { canAccessServer } from '../access.ts';
import { normalizeRequestPath } from '../paths.ts';
import { boundPathAllowed, serverNameOf } from '../resource-binding.ts';
import { scanRpcCalls, type RpcCall } from '../rpc-scan.ts';

const ErrorBody = Type.Object({ detail: Type.Unknown(), code: Type.String() });
// A type list, not anyOf: fast-json-stringify serialises it without running a validator per field.
const NullableString = Type.Unsafe<string | null>({ type: ['string', 'null'] });
const ValidateResponse = Type.Object({
  valid: Type.Boolean(),
  username: Type.String(),
  client_id: NullableString,
  scopes: Type.Array(Type.String()),
  method: NullableString,
  groups: Type.Array(Type.String()),
  server_name: NullableString,
  tool_name: NullableString,
});

/** Header-safe text: control characters dropped, anything beyond Latin-1 percent-encoded (Node refuses it). */
function headerValue(v: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x20-\x7e]*$/.test(v)) return v;
  // eslint-disable-next-line no-control-regex
  return v.replace(/[\u0000-\u001f\u007f]/g, '').replace(/[^\x20-\x7e]/g, (c) => encodeURIComponent(c));
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The JSON-RPC calls of a body (object, batch array, JSON text or base64 JSON text). */
export function rpcCallsOf(body: unknown): RpcCall[] {
  let value = body;
  if (typeof value === 'string') {
    const scanned = scanRpcCalls(value);
    if (scanned) return scanned;
    const text = value.trim();
    if (!text) return [];
    try {
      value = JSON.parse(text);
    } catch {
      try {
        value = JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
      } catch {
        return [];
      }
    }
  }
  const items = Array.isArray(value) ? value : [value];
  const calls: RpcCall[] = [];
  for (const item of items) {
    if (!item || typeof item !== 'object') continue;
    const m = (item as { method?: unknown }).method;
    if (typeof m !== 'string') continue;
    const params = (item as { params?: { name?: unknown } }).params;
    calls.push({ method: m, tool: m === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined });
  }
  return calls;
}

function beforeQuery(s: string): string {
  const q = s.search(/[?#]/);
  return q < 0 ? s : s.slice(0, q);
}

const PLAIN_ORIGIN = /^https?:\/\/[A-Za-z0-9.:[\]-]+(?=\/)/;

/** The path of an X-Original-URL / X-Original-URI value, absolute or not, without its query. */
function originalPath(raw: string): string {
  if (raw.charCodeAt(0) === 47 /* / */ && raw.charCodeAt(1) !== 47) return beforeQuery(raw);
  // The usual absolute form (scheme, plain host, path) without building a URL object;
  // anything unusual (credentials, dot segments, encodings) goes through the WHATWG parser.
  const origin = PLAIN_ORIGIN.exec(raw);
  if (origin) {
    const path = beforeQuery(raw.slice(origin[0].length));
    if (!path.includes('/.') && !path.includes('%') && !path.includes('\\')) return path;
  }
  try {
    return new URL(raw, 'http://edge.invalid').pathname;
  } catch {
    return raw.split('?')[0];
  }
}

/** What /validate judges: the original request's path, the server it addresses, and that server's header value. */
interface Target {
  path: string;
  server?: string;
  serverHeader: string;
  /** The path has an encoded slash that, decoded, would climb out of where it points (normalizeRequestPath). */
  refused?: true;
}

/**
 * Targets by the raw header value. An edge gateway asks about the same few
 * URLs (one per MCP server it fronts) over and over, and working the path and
 * server out of the text again (a regex for the origin, one for the MCP
 * suffix, prefix checks against the registry's own paths) was the largest part
 * of the check after reading the body. Both are pure functions of the text.
 * Bounded: when full it starts over, so URLs that never repeat (per-session
 * query strings) cost a recomputation each, never memory.
 */
const targets = new Map<string, Target>();
const MAX_TARGETS = 4096;

function targetOf(request: FastifyRequest): Target | undefined {
  const raw = one(request.headers['x-original-url']) ?? one(request.headers['x-original-uri']);
  if (!raw) return undefined;
  let target = targets.get(raw);
  if (target === undefined) {
    // Judged as the backend will read it: dot segments and encoded dots resolved (RFC 3986), for both forms.
    const path = normalizeRequestPath(originalPath(raw));
    if (path === undefined) target = { path: '', serverHeader: '', refused: true };
    else {
      const server = serverNameOf(path);
      target = { path, server, serverHeader: server === undefined ? '' : headerValue(server) };
    }
    if (targets.size >= MAX_TARGETS) targets.clear();
    targets.set(raw, target);
  }
  return target;
}

/** The caller's part of the user-context headers, built once per cached identity (tokens are cached, so are these). */
const identityHeaders = new WeakMap<object, Record<string, string>>();
function headersOf(user: NonNullable<FastifyRequest['user']>): Record<string, string> {
  let h = identityHeaders.get(user);
  if (!h) {
    h = {
      'x-user': headerValue(user.username),
      'x-username': headerValue(user.username),
      'x-client-id': headerValue(user.client_id ?? ''),
      'x-scopes': headerValue(user.scopes.join(' ')),
      'x-groups': headerValue(user.groups.join(' ')),
      'x-auth-method': user.auth_method,
    };
    identityHeaders.set(user, h);
  }
  return h;
}

type ValidateBody = Static<typeof ValidateResponse>;
type ByTool = Map<string | null, ValidateBody>;
type ByServer = Map<string | null, ByTool>;

/** Answers kept per caller; past this many distinct calls the caller's set starts over. */
const MAX_ANSWERS = 256;
const answers = new WeakMap<object, { n: number; byMethod: Map<string | null, ByServer> }>();

/**
 * The 200 body for one caller and one call, made once and deep-frozen, so the
 * route's serialiser writes it once too (plugins/ops/serialize-memo.ts). An edge
 * asks about the same caller calling the same tool over and over, and the body
 * depends on nothing else. Keyed by the cached identity object (a token's
 * identity is cached until the token expires or scopes change; either makes a
 * new object), then by method, server and tool in nested maps, so no two calls
 * can share a key. The access decision is not cached here: it runs on every
 * request before the body is looked up.
 */
function answerOf(
  user: NonNullable<FastifyRequest['user']>,
  method: string | null,
  server: string | null,
  tool: string | null,
): ValidateBody {
  let a = answers.get(user);
  if (!a) answers.set(user, (a = { n: 0, byMethod: new Map() }));
  if (a.n >= MAX_ANSWERS) {
    a.byMethod.clear();
    a.n = 0;
  }
  let byServer = a.byMethod.get(method);
  if (!byServer) a.byMethod.set(method, (byServer = new Map()));
  let byTool = byServer.get(server);
  if (!byTool) byServer.set(server, (byTool = new Map()));
  let body = byTool.get(tool);
  if (!body) {
    // Copies of the caller's lists: freezing must not reach into the cached identity.
    body = deepFreeze({
      valid: true,
      username: user.username,
      client_id: user.client_id ?? null,
      scopes: [...user.scopes],
      method,
      groups: [...user.groups],
      server_name: server,
      tool_name: tool,
    });
    byTool.set(tool, body);
    a.n++;
  }
  return body;
}

/**
 * GET /validate for an edge gateway (nginx auth_request and the like): is the
 * caller allowed the original request? 200 with user-context headers, 401
 * with a Bearer challenge, or 403 `Access denied to {server}.{method}`.
 */
export default async function validateRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Synchronous: nothing here waits, so no promise per request (this is the edge's hot path).
  const handler = (request: FastifyRequest, reply: FastifyReply) => {
    const user = request.user;
    if (!user) {
      throw new SwitchboardError(
        401,
        'SB_ERR_AUTH_UNAUTHENTICATED',
        request.authFailure ?? 'Missing or invalid credentials: send Authorization: Bearer <token>',
        {
          headers: { 'www-authenticate': 'Bearer' },
        },
      );
    }
    const target = targetOf(request);
    if (target?.refused) {
      throw forbidden(
        'SB_ERR_VALIDATE_PATH',
        'Access denied: the original URL has an encoded slash or backslash (%2F, %5C) next to a dot segment, which could reach another server than the one it names; send the path with plain slashes and without dot segments',
      );
    }
    const path = target?.path;
    const server = target?.server;
    const xBody = one(request.headers['x-body']);
    const calls = rpcCallsOf(xBody ?? request.body);
    const first = calls[0];

    if (user.resource && path !== undefined && !boundPathAllowed(user.resource, path)) {
      throw forbidden(
        'SB_ERR_VALIDATE_RESOURCE_BOUND',
        `Access denied: this token is bound to ${user.resource.type} '${user.resource.id}' and cannot be used on ${path}`,
      );
    }
    if (server !== undefined) {
      if (calls.length === 0) {
        if (!canAccessServer(user, server)) throw forbidden('SB_ERR_VALIDATE_DENIED', `Access denied to ${server}`);
      }
      for (const c of calls) {
        if (!canAccessServer(user, server, c.method, c.tool)) {
          throw forbidden('SB_ERR_VALIDATE_DENIED', `Access denied to ${server}.${c.method}`);
        }
      }
    }

    const method = first?.method ?? one(request.headers['x-original-method']) ?? null;
    const tool = first?.tool ?? null;
    reply.headers(headersOf(user));
    reply.header('x-server-name', target?.serverHeader ?? '');
    reply.header('x-tool-name', tool === null ? '' : headerValue(tool));
    reply.send(answerOf(user, method, server ?? null, tool));
  };

  const schema = (summary: string) => ({
    schema: {
      tags: ['auth'],
      summary,
      description:
        'Reads X-Authorization / Authorization / the session cookie, X-Original-URL or X-Original-URI, X-Original-Method, and X-Body (the JSON-RPC body) or the request body.',
      response: { 200: ValidateResponse, 401: ErrorBody, 403: ErrorBody },
    },
  });
  app.get('/validate', schema('Edge auth check: token, then server/method/tool against the caller’s scopes'), handler);
  app.post('/validate', schema('Edge auth check with the JSON-RPC body in the request body'), handler);
}
