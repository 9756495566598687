import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from '@sinclair/typebox';
import type { buildConnector } from 'undici';
import { SwitchboardError, badGateway, badRequest, forbidden, notFound, unauthorized } from '../../../core/errors.ts';
import { BackendPools, backendRequest, type BackendResponse } from './backend-http.ts';
import { filterToolsJson, filterToolsSse, rpcCalls } from './jsonrpc.ts';
import type { PubSub } from '../../../core/pubsub.ts';
import { SseRelay, type RelayAnswer, type RelayedPost } from './sse-relay.ts';

/** What the gateway needs to know of a registered server, credential already decrypted (in memory only). */
export interface GatewayBackend {
  path: string;
  enabled: boolean;
  /** Tagged `security-pending` by a scan. */
  blocked: boolean;
  /** The backend's streamable-HTTP MCP endpoint, or its SSE endpoint for SSE servers. */
  url: string;
  transport: 'streamable-http' | 'sse';
  headers: Record<string, string>;
  /** The registered proxy_pass_url, judged by the address guard along with `url`. */
  origin?: string;
}

export interface GatewayOptions {
  resolve(serverPath: string): Promise<GatewayBackend | undefined>;
  /** May the caller use `method` (and `tool` for tools/call) on this server? */
  allowed(request: FastifyRequest, server: string, method: string, tool?: string): boolean;
  /** Time allowed for the backend's response headers. */
  timeoutMs: number;
  /** The refused address class a backend URL reaches (link-local, metadata), or undefined when allowed. */
  blockedAddress?(...urls: Array<string | undefined>): Promise<string | undefined>;
  /** How backend connections are opened: the address guard's pinned connector (judged at connect time). */
  connect?: buildConnector.connector;
  /** Replicas on one Redis: SSE messages that reach this replica for another's session are relayed there. */
  pubsub?: PubSub;
}

/** One SSE session opened through the gateway. */
interface SseSession {
  /** The server path segment the stream was opened on; messages must come through the same one. */
  server: string;
  /** The backend's messages URL, learnt from its `endpoint` event. */
  target: string;
  /** Who opened the stream; messages of the session must come from the same caller. */
  owner: string | undefined;
  /** ids of tools/list requests posted in this session; their answers arrive on the stream. */
  listIds: Set<unknown>;
}

// Hop-by-hop and identity headers are never forwarded; the caller's gateway token stays here.
const FORWARD_REQUEST = ['content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];
const FORWARD_RESPONSE = ['content-type', 'mcp-session-id', 'cache-control'];

const Params = Type.Object({ server: Type.String() });

/**
 * The caller's token is never forwarded, so a backend 401 can only mean the
 * stored credential was refused. Passed through, it would read as the caller's
 * token being rejected (and send OAuth-capable clients into a login flow).
 */
function refuseBackendAuth(res: BackendResponse, server: string): void {
  refuseRedirect(res, server);
  if (res.status !== 401) return;
  res.body.resume();
  throw badGateway(
    'SB_ERR_GATEWAY_BACKEND_AUTH',
    `The backend of /${server} refused the stored credential (401); an administrator must update it (PATCH /api/servers/${server}/auth-credential)`,
  );
}

/**
 * A backend's redirect is neither followed (its target was never judged by the
 * address guard) nor passed on (the client would follow it, with the gateway
 * token, to wherever the backend points). 304 is no redirect, but nothing the
 * gateway forwards can earn one.
 */
function refuseRedirect(res: BackendResponse, server: string): void {
  if (res.status < 300 || res.status >= 400 || res.status === 304) return;
  res.body.resume();
  throw badGateway(
    'SB_ERR_GATEWAY_BACKEND_REDIRECT',
    `The backend of /${server} redirected (${res.status}) instead of answering; the gateway does not follow backend redirects, so an administrator must register the backend's final URL`,
  );
}

/** Text safe inside a quoted-string of a WWW-Authenticate parameter. */
function quotedParam(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '');
}

/**
 * No identity: a token that was sent but refused (expired, bad signature,
 * unknown issuer) is an invalid_token (RFC 6750 3.1) with the reason, so the
 * client knows to get a new token rather than to add one.
 */
function unauthenticated(request: FastifyRequest): SwitchboardError {
  const why = request.authFailure;
  if (!why)
    return unauthorized(
      'SB_ERR_GATEWAY_UNAUTHENTICATED',
      'A gateway token is required (X-Authorization: Bearer <token>)',
    );
  return new SwitchboardError(401, 'SB_ERR_GATEWAY_INVALID_TOKEN', `The gateway token was refused: ${why}`, {
    headers: { 'www-authenticate': `Bearer error="invalid_token", error_description="${quotedParam(why)}"` },
  });
}
const AnyBody = Type.Unknown();

// Above this an answer is piped even when its length is known.
const BUFFER_LIMIT = 1024 * 1024;

/** A length-delimited, non-SSE answer small enough to hold in memory. */
function completeAndSmall(res: BackendResponse): boolean {
  const len = Number(res.header('content-length'));
  return (
    Number.isFinite(len) && len <= BUFFER_LIMIT && !(res.header('content-type') ?? '').includes('text/event-stream')
  );
}

function copyHeaders(from: BackendResponse, reply: FastifyReply): void {
  for (const h of FORWARD_RESPONSE) {
    const v = from.header(h);
    if (v) reply.header(h, v);
  }
}

/**
 * The built-in MCP gateway: `/{server}/mcp` (streamable HTTP) and `/{server}/sse`
 * + `/{server}/messages` (SSE) proxied to the registered backend after the same
 * checks /validate makes, with the stored backend credential injected.
 */
export interface GatewayHandle {
  /** SSE sessions currently open (each ends with its stream). */
  openSseSessions(): number;
}

export async function registerGateway(fastify: FastifyInstance, opts: GatewayOptions): Promise<GatewayHandle> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // SSE sessions by session id; an entry lives as long as its stream.
  const sseSessions = new Map<string, SseSession>();
  const pools = new BackendPools(opts.connect);
  app.addHook('onClose', async () => pools.close());
  // Answers come within the backend timeout; the holder acknowledges within a pub/sub round trip.
  const sseRelay = opts.pubsub
    ? new SseRelay(
        opts.pubsub,
        (sid) => sseSessions.has(sid),
        (post) => postToSession(post),
        1000,
        opts.timeoutMs + 5000,
      )
    : undefined;
  app.addHook('onClose', async () => sseRelay?.close());

  const backendFor = async (request: FastifyRequest, server: string): Promise<GatewayBackend> => {
    if (!request.user) throw unauthenticated(request);
    const b = await opts.resolve(`/${server}`);
    if (!b) throw notFound('SB_ERR_GATEWAY_UNKNOWN_SERVER', `No MCP server is registered at /${server}`);
    if (b.blocked)
      throw forbidden(
        'SB_ERR_GATEWAY_SECURITY_PENDING',
        `/${server} is held for security review (security-pending) and cannot be used`,
      );
    if (!b.enabled) throw forbidden('SB_ERR_GATEWAY_DISABLED', `/${server} is disabled`);
    const refused = await opts.blockedAddress?.(b.origin, b.url);
    if (refused)
      throw forbidden(
        'SB_ERR_GATEWAY_BLOCKED_ADDRESS',
        `The backend of /${server} points at a ${refused} address, which is refused (set registry.allow_link_local_backends to allow link-local backends)`,
      );
    return b;
  };

  // The resolved URL of an SSE server is its SSE endpoint: streamable-HTTP traffic sent there gets the backend's 404 page.
  const streamable = (b: GatewayBackend, server: string): GatewayBackend => {
    if (b.transport === 'sse')
      throw badRequest('SB_ERR_GATEWAY_TRANSPORT', `/${server} speaks MCP over SSE; connect to /${server}/sse`);
    return b;
  };

  const checkCalls = (request: FastifyRequest, server: string, body: unknown) => {
    const calls = rpcCalls(body);
    for (const c of calls) {
      if (!opts.allowed(request, server, c.method, c.tool)) {
        throw forbidden(
          'SB_ERR_GATEWAY_DENIED',
          `Access denied to ${server}.${c.tool ? `${c.method}:${c.tool}` : c.method}: the token's scopes do not grant ${c.tool ? `tool '${c.tool}'` : `method '${c.method}'`} on /${server} (a scope's server_access must list it)`,
        );
      }
    }
    return calls;
  };

  const forwardedHeaders = (request: FastifyRequest) => {
    const h: Record<string, string> = {};
    for (const name of FORWARD_REQUEST) {
      const v = request.headers[name];
      if (typeof v === 'string') h[name] = v;
    }
    return h;
  };
  const outgoingHeaders = (request: FastifyRequest, b: GatewayBackend) => ({
    ...forwardedHeaders(request),
    ...b.headers,
  });

  const noBody = { tags: ['mcp-gateway'], params: Params };
  const schema = { ...noBody, body: AnyBody };

  app.post(
    '/:server/mcp',
    { schema: { ...schema, summary: 'MCP streamable HTTP through the gateway' } },
    async (request, reply) => {
      const { server } = request.params;
      const b = streamable(await backendFor(request, server), server);
      const calls = checkCalls(request, server, request.body);
      const res = await backendRequest(
        pools,
        b.url,
        {
          method: 'POST',
          headers: { ...outgoingHeaders(request, b), 'content-type': 'application/json' },
          body: JSON.stringify(request.body),
        },
        opts.timeoutMs,
        `/${server}`,
      );
      refuseBackendAuth(res, server);
      reply.status(res.status);
      copyHeaders(res, reply);
      const listIds = new Set(calls.filter((c) => c.method === 'tools/list').map((c) => c.id));
      if (listIds.size > 0 && res.ok) {
        // tools/list answers are small: buffer them to drop the tools this caller may not call.
        const text = await res.text();
        const allowed = (tool: string) => opts.allowed(request, server, 'tools/call', tool);
        const ct = res.header('content-type') ?? '';
        try {
          return reply.send(
            ct.includes('text/event-stream')
              ? filterToolsSse(text, listIds, allowed)
              : filterToolsJson(text, listIds, allowed),
          );
        } catch (err) {
          // Unfilterable means unsafe to pass on (it could list tools the caller may not call).
          throw badGateway(
            'SB_ERR_GATEWAY_BACKEND_INVALID',
            `The backend of /${server} answered tools/list with a body that is not JSON`,
            err,
          );
        }
      }
      // A small answer of known length is one complete message, not a stream: sent as
      // bytes it costs one socket write, where piping costs stream plumbing and chunked framing.
      if (completeAndSmall(res)) return reply.send(await res.bytes());
      return reply.send(res.body);
    },
  );

  /**
   * GET opens the server-to-client stream, passed through with its headers; DELETE ends the
   * session, and its (short) answer is sent as text.
   */
  const relay =
    (method: 'GET' | 'DELETE') =>
    async (request: FastifyRequest<{ Params: Static<typeof Params> }>, reply: FastifyReply) => {
      const { server } = request.params;
      const b = streamable(await backendFor(request, server), server);
      const res = await backendRequest(
        pools,
        b.url,
        { method, headers: outgoingHeaders(request, b) },
        opts.timeoutMs,
        `/${server}`,
      );
      refuseBackendAuth(res, server);
      if (method === 'DELETE') return reply.status(res.status).send(await res.text());
      reply.status(res.status);
      copyHeaders(res, reply);
      return reply.send(res.body);
    };

  app.get(
    '/:server/mcp',
    { schema: { ...noBody, summary: 'MCP server-to-client stream through the gateway' } },
    relay('GET'),
  );
  app.delete(
    '/:server/mcp',
    { schema: { ...noBody, summary: 'End an MCP session through the gateway' } },
    relay('DELETE'),
  );

  app.get(
    '/:server/sse',
    { schema: { ...noBody, summary: 'MCP SSE stream through the gateway' } },
    async (request, reply) => {
      const { server } = request.params;
      const b = await backendFor(request, server);
      if (b.transport !== 'sse')
        throw badRequest('SB_ERR_GATEWAY_TRANSPORT', `/${server} speaks streamable HTTP; use /${server}/mcp`);
      const res = await backendRequest(
        pools,
        b.url,
        { method: 'GET', headers: { ...outgoingHeaders(request, b), accept: 'text/event-stream' } },
        opts.timeoutMs,
        `/${server}`,
      );
      refuseRedirect(res, server);
      if (!res.ok) {
        res.body.resume();
        throw badGateway(
          'SB_ERR_GATEWAY_BACKEND_STATUS',
          `The backend of /${server} answered ${res.status} to the SSE connect`,
        );
      }
      reply.status(200);
      copyHeaders(res, reply);
      // Rewrite the backend's `endpoint` event so the client posts its messages to us,
      // and filter tools/list answers, which arrive on this stream rather than on the POST.
      const decoder = new TextDecoder();
      const allowedTool = (tool: string) => opts.allowed(request, server, 'tools/call', tool);
      const owned: string[] = [];
      let pending = '';
      const rewrite = new TransformStream<Uint8Array, string>({
        transform(chunk, ctl) {
          pending += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
          const events = pending.split('\n\n');
          pending = events.pop() ?? '';
          for (const ev of events) {
            if (/^event: ?endpoint$/m.test(ev)) {
              const data = /^data: ?(.*)$/m.exec(ev)?.[1]?.trim() ?? '';
              const backendUrl = new URL(data, b.url);
              // Our own id, not the backend's: two backends may issue the same ids, and a
              // session id posted under another server's path must not reach this backend.
              const sid = randomUUID();
              sseSessions.set(sid, {
                server,
                target: backendUrl.toString(),
                owner: request.user?.username,
                listIds: new Set(),
              });
              owned.push(sid);
              ctl.enqueue(`event: endpoint\ndata: /${server}/messages?sessionId=${encodeURIComponent(sid)}\n\n`);
              continue;
            }
            const session = owned.length ? sseSessions.get(owned[owned.length - 1]) : undefined;
            if (session && session.listIds.size > 0 && /^data:/m.test(ev)) {
              const out = filterToolsSse(ev, session.listIds, allowedTool, true);
              ctl.enqueue(`${out}\n\n`);
            } else {
              ctl.enqueue(`${ev}\n\n`);
            }
          }
        },
      });
      const drop = () => {
        for (const sid of owned) sseSessions.delete(sid);
      };
      // The session ends with its stream, whichever side closes it.
      request.raw.once('close', drop);
      const body = Readable.fromWeb(
        (Readable.toWeb(res.body) as ReadableStream<Uint8Array>).pipeThrough(rewrite) as never,
      );
      body.once('close', drop);
      return reply.send(body);
    },
  );

  app.post(
    '/:server/messages',
    {
      schema: {
        ...schema,
        querystring: Type.Object({ sessionId: Type.String() }),
        summary: 'MCP SSE client messages through the gateway',
      },
    },
    async (request, reply) => {
      const { server } = request.params;
      const b = await backendFor(request, server);
      checkCalls(request, server, request.body);
      const sid = request.query.sessionId;
      const owner = request.user?.username;
      const headers = forwardedHeaders(request);
      const session = sseSessions.get(sid);
      // Opened through another replica: that one holds the stream the backend answers on (sse-relay.ts).
      const answer = session
        ? await postToSession({ sid, server, owner, headers, body: request.body }, b)
        : await sseRelay?.forward({ sid, server, owner, headers, body: request.body });
      if (!answer)
        throw notFound(
          'SB_ERR_GATEWAY_SESSION',
          `Unknown SSE session for /${server}; connect to /${server}/sse first and post to the endpoint it announces`,
        );
      return reply.status(answer.status).send(answer.text);
    },
  );

  /** A client message of a session this replica holds, from its own client or relayed from another replica. */
  async function postToSession(post: RelayedPost, b?: GatewayBackend): Promise<RelayAnswer> {
    const { server } = post;
    const session = sseSessions.get(post.sid);
    if (!session || session.server !== server)
      throw notFound(
        'SB_ERR_GATEWAY_SESSION',
        `Unknown SSE session for /${server}; connect to /${server}/sse first and post to the endpoint it announces`,
      );
    if (session.owner !== post.owner)
      throw forbidden('SB_ERR_GATEWAY_SESSION_OWNER', 'This SSE session belongs to another caller');
    // Relayed: the asking replica checked the caller; this one still refuses a server disabled or held since.
    const backend = b ?? (await opts.resolve(`/${server}`));
    if (!backend?.enabled || backend.blocked)
      throw forbidden('SB_ERR_GATEWAY_DISABLED', `/${server} is disabled, held for review or no longer registered`);
    const refused = await opts.blockedAddress?.(session.target);
    if (refused)
      throw forbidden(
        'SB_ERR_GATEWAY_BLOCKED_ADDRESS',
        `The SSE messages endpoint of /${server} points at a ${refused} address, which is refused`,
      );
    for (const c of rpcCalls(post.body)) if (c.method === 'tools/list' && c.id !== undefined) session.listIds.add(c.id);
    const res = await backendRequest(
      pools,
      session.target,
      {
        method: 'POST',
        headers: { ...post.headers, ...backend.headers, 'content-type': 'application/json' },
        body: JSON.stringify(post.body),
      },
      opts.timeoutMs,
      `/${server}`,
    );
    refuseBackendAuth(res, server);
    return { status: res.status, text: await res.text() };
  }

  return { openSseSessions: () => sseSessions.size };
}
