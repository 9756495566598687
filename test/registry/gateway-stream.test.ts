import t, { type Test } from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  listenOnLoopback as listen,
  listeningRegistry as listening,
  registerServer as register,
} from '../helpers/registry-servers.ts';
import { asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { startEverything } from '../mcp/servers.ts';
import { startBearerServer } from '../mcp/bearer-server.ts';
import { readJsonBody } from '../fixtures/json-body.ts';

/**
 * What the gateway must not get wrong about MCP streams and sessions: answers
 * streamed as the backend sends them, Mcp-Session-Id carried both ways, and SSE
 * sessions that belong to their caller and end with their stream.
 */

/** A gate the test opens: the backend holds its second event until then. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

const sseEvent = (data: unknown) => `event: message\ndata: ${JSON.stringify(data)}\n\n`;

/** Read a web stream until the text so far matches; the 5 s bound only turns a hang into a failure message. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  state: { text: string },
  pattern: RegExp,
): Promise<'seen' | 'stalled' | 'ended'> {
  const decoder = new TextDecoder();
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<'stalled'>((r) => (timer = setTimeout(() => r('stalled'), 5000)));
  try {
    while (!pattern.test(state.text)) {
      const next = await Promise.race([reader.read(), stalled]);
      if (next === 'stalled') return 'stalled';
      if (next.done) return pattern.test(state.text) ? 'seen' : 'ended';
      state.text += decoder.decode(next.value, { stream: true });
    }
    return 'seen';
  } finally {
    clearTimeout(timer);
  }
}

t.test('streamed answers reach the client as the backend sends them (POST and GET streams)', async (t) => {
  const post = gate();
  const get = gate();
  const sent = { postSecond: false, getSecond: false };
  const heldClosed = { done: false };
  const backend = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.headers['mcp-session-id'] === 'hold') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        sseEvent({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'held-open' } }),
      );
      res.on('close', () => (heldClosed.done = true));
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(
        sseEvent({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'get-first' } }),
      );
      await get.opened;
      sent.getSecond = true;
      res.end(
        sseEvent({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'get-second' } }),
      );
      return;
    }
    const msg = await readJsonBody<{ id?: unknown; method?: string; params?: { name?: string } }>(req);
    if (msg?.method !== 'tools/call') {
      // Health probes at registration: not part of this test.
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'stream-session' });
    res.write(
      sseEvent({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 1, progress: 1, message: 'post-first' },
      }),
    );
    await post.opened;
    sent.postSecond = true;
    res.end(sseEvent({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'post-second' }] } }));
  });
  const url = await listen(t, backend);
  t.teardown(() => {
    post.open();
    get.open();
  });
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, { name: 'Streamer', path: '/streamer', proxy_pass_url: url });

  const answer = fetch(`${base}/streamer/mcp`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'slow', arguments: {} } }),
  });
  // A buffering gateway would not even send its headers before the backend finished.
  const headed = await Promise.race([
    answer.then(() => 'headers' as const),
    new Promise<'stalled'>((r) => setTimeout(() => r('stalled'), 5000).unref()),
  ]);
  t.equal(headed, 'headers', 'the response started while the backend held its second event');
  if (headed === 'stalled') post.open();
  const res = await answer;
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /text\/event-stream/);
  t.equal(res.headers.get('mcp-session-id'), 'stream-session', 'the backend session id reaches the client');
  const reader = res.body!.getReader();
  const state = { text: '' };
  t.equal(
    await readUntil(reader, state, /post-first/),
    'seen',
    'the first event arrived while the backend held the second',
  );
  t.equal(sent.postSecond, false, 'the second event had not been sent yet');
  post.open();
  t.equal(await readUntil(reader, state, /post-second/), 'seen', 'the second event follows once sent');
  await reader.cancel();

  const stream = await fetch(`${base}/streamer/mcp`, { headers: { ...admin, accept: 'text/event-stream' } });
  t.equal(stream.status, 200);
  const getReader = stream.body!.getReader();
  const getState = { text: '' };
  t.equal(
    await readUntil(getReader, getState, /get-first/),
    'seen',
    'GET stream: first event before the second is sent',
  );
  t.equal(sent.getSecond, false);
  get.open();
  t.equal(await readUntil(getReader, getState, /get-second/), 'seen');
  await getReader.cancel();

  // A long-lived GET stream the client abandons: the backend's stream is closed with it.
  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const held = await fetch(`${base}/streamer/mcp`, {
    headers: { ...admin, accept: 'text/event-stream', 'mcp-session-id': 'hold' },
    signal: abort.signal,
  });
  const heldReader = held.body!.getReader();
  t.equal(await readUntil(heldReader, { text: '' }, /held-open/), 'seen');
  abort.abort();
  for (let i = 0; i < 50 && !heldClosed.done; i++) await new Promise((r) => setTimeout(r, 100));
  t.ok(heldClosed.done, 'the backend saw the abandoned stream close');
});

t.test('Mcp-Session-Id is kept across requests, and DELETE ends the session at the backend', async (t) => {
  const backend = await startBearerServer('sekrit');
  t.teardown(() => backend.stop());
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, {
    name: 'Sessions',
    path: '/sessions',
    proxy_pass_url: backend.url.replace(/\/mcp$/, ''),
    auth_scheme: 'bearer',
    auth_credential: 'sekrit',
  });

  const transport = new StreamableHTTPClientTransport(new URL(`${base}/sessions/mcp`), {
    requestInit: { headers: admin },
  });
  const client = new Client({ name: 'sessions', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  const sid = transport.sessionId;
  t.ok(sid, 'the session id the backend issued reached the client through the gateway');
  await client.listTools();
  await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } });
  const withSid = backend.seen.filter((h) => h['mcp-session-id'] === sid);
  t.ok(withSid.length >= 3, `every later request carried it to the backend (${withSid.length})`);
  t.ok(
    withSid.every((h) => h['mcp-protocol-version']),
    'and the negotiated protocol version with it',
  );

  // The SDK server answers 400 to a DELETE without a session id; success means the id went through.
  await transport.terminateSession();
  t.equal(transport.sessionId, undefined, 'the session was ended');
  const after = await fetch(`${base}/sessions/mcp`, {
    method: 'POST',
    headers: {
      ...admin,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sid!,
      'mcp-protocol-version': '2025-03-26',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} }),
  });
  t.not(after.status, 200, 'the ended session is gone at the backend');
});

/**
 * A minimal MCP SSE backend: GET /sse opens a stream and announces
 * /messages?sessionId=..., POST /messages answers on that stream. A
 * `tools/call` of `slow` sends one event, waits for the gate, sends another.
 * Records which streams ended.
 */
async function sseBackend(t: Test) {
  const streams = new Map<string, ServerResponse>();
  const ended: string[] = [];
  const slow = gate();
  let secondSent = false;
  let n = 0;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const id = `s${++n}`;
      streams.set(id, res);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`event: endpoint\ndata: /messages?sessionId=${id}\n\n`);
      res.on('close', () => {
        streams.delete(id);
        ended.push(id);
      });
      return;
    }
    const stream = streams.get(url.searchParams.get('sessionId') ?? '');
    const msg = await readJsonBody<{ id?: unknown; method?: string; params?: { name?: string } }>(req);
    if (!stream || !msg) {
      res.writeHead(404).end('no such session');
      return;
    }
    res.writeHead(202).end('Accepted');
    if (msg.method === 'tools/call' && msg.params?.name === 'slow') {
      stream.write(
        sseEvent({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: 1, progress: 1, message: 'sse-first' },
        }),
      );
      await slow.opened;
      secondSent = true;
    }
    if (msg.id !== undefined) stream.write(sseEvent({ jsonrpc: '2.0', id: msg.id, result: { echo: msg.method } }));
  });
  const url = await listen(t, server);
  t.teardown(() => slow.open());
  return { url, ended, slow, secondSent: () => secondSent, open: () => streams.size };
}

t.test(
  'SSE sessions: streamed, bound to their caller, ended with the client stream (and the backend stream with it)',
  async (t) => {
    const backend = await sseBackend(t);
    const { app, base, admin } = await listening(t);
    await register(t, app, admin, {
      name: 'Legacy',
      path: '/legacy',
      proxy_pass_url: backend.url,
      supported_transports: ['sse'],
    });
    const other = await asUser(app, ['mcp-registry-admin'], 'mallory');

    const abort = new AbortController();
    t.teardown(() => abort.abort());
    const sse = await fetch(`${base}/legacy/sse`, {
      headers: { ...admin, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    t.equal(sse.status, 200);
    const reader = sse.body!.getReader();
    const state = { text: '' };
    t.equal(await readUntil(reader, state, /event: endpoint\ndata: (\S+)\n\n/), 'seen');
    const endpoint = /event: endpoint\ndata: (\S+)\n\n/.exec(state.text)![1];
    t.match(endpoint, /^\/legacy\/messages\?sessionId=/, 'the endpoint is rewritten to the gateway');
    t.notMatch(state.text, new RegExp(backend.url), 'the backend address is not disclosed');

    const postMsg = (headers: Record<string, string>, body: unknown) =>
      fetch(`${base}${endpoint}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    const stolen = await postMsg(other, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    t.equal(stolen.status, 403, 'another caller cannot post into the session');
    t.match(await stolen.json(), { code: 'SB_ERR_GATEWAY_SESSION_OWNER' });
    const anonymous = await postMsg({}, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    t.equal(anonymous.status, 401);

    const accepted = await postMsg(admin, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'slow', arguments: {} },
    });
    t.equal(accepted.status, 202);
    t.equal(
      await readUntil(reader, state, /sse-first/),
      'seen',
      'the first event arrived while the backend held the rest',
    );
    t.equal(backend.secondSent(), false);
    backend.slow.open();
    t.equal(await readUntil(reader, state, /"id":2/), 'seen', 'the answer follows on the stream');

    // The client goes away: its session at the gateway ends, and the backend stream is closed too.
    abort.abort();
    let status = 0;
    for (let i = 0; i < 50; i++) {
      status = (await postMsg(admin, { jsonrpc: '2.0', id: 3, method: 'ping', params: {} })).status;
      if (status === 404 && backend.open() === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.equal(status, 404, 'the session is gone from the gateway once the client disconnected');
    t.equal(backend.open(), 0, 'the backend stream was closed, not leaked');
    const backendSid = new URL(endpoint, base).searchParams.get('sessionId');
    t.ok(backend.ended.length >= 1, 'the backend saw its stream end');
    t.notOk(backend.ended.includes(backendSid ?? ''), 'the gateway does not hand out the backend session id');
  },
);

t.test('SSE sessions of two servers whose backends issue the same session ids stay apart', async (t) => {
  const one = await sseBackend(t);
  const two = await sseBackend(t);
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, { name: 'One', path: '/one', proxy_pass_url: one.url, supported_transports: ['sse'] });
  await register(t, app, admin, { name: 'Two', path: '/two', proxy_pass_url: two.url, supported_transports: ['sse'] });

  const openSession = async (path: string) => {
    const abort = new AbortController();
    t.teardown(() => abort.abort());
    const res = await fetch(`${base}${path}/sse`, {
      headers: { ...admin, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    const state = { text: '' };
    t.equal(await readUntil(reader, state, /event: endpoint\ndata: (\S+)\n\n/), 'seen');
    return { endpoint: /event: endpoint\ndata: (\S+)\n\n/.exec(state.text)![1], reader, state };
  };
  const a = await openSession('/one');
  const b = await openSession('/two');
  t.not(
    new URL(a.endpoint, base).searchParams.get('sessionId'),
    new URL(b.endpoint, base).searchParams.get('sessionId'),
    'distinct session ids at the gateway',
  );

  const send = (endpoint: string, id: number) =>
    fetch(`${base}${endpoint}`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }),
    });
  t.equal((await send(a.endpoint, 11)).status, 202);
  t.equal(
    await readUntil(a.reader, a.state, /"id":11/),
    'seen',
    "a message posted in /one's session is answered on /one's stream",
  );
  t.equal((await send(b.endpoint, 12)).status, 202);
  t.equal(await readUntil(b.reader, b.state, /"id":12/), 'seen', "and /two's on /two's");

  // /two's session id used under /one: the checks made were /one's, so it must not reach /two's backend.
  const sidOfTwo = new URL(b.endpoint, base).searchParams.get('sessionId')!;
  const crossed = await fetch(`${base}/one/messages?sessionId=${encodeURIComponent(sidOfTwo)}`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'tools/list', params: {} }),
  });
  t.equal(crossed.status, 404, 'a session of another server is unknown here');
  t.match(await crossed.json(), { code: 'SB_ERR_GATEWAY_SESSION' });
});

/** An SDK client over SSE whose GET stream and POSTs both carry `headers`; closed at teardown. */
async function sseClient(t: Test, url: string, headers: Record<string, string>, name: string): Promise<Client> {
  const transport = new SSEClientTransport(new URL(url), {
    requestInit: { headers },
    eventSourceInit: {
      fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
    },
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}

t.test('the SDK SSE client lists and calls tools of the reference server through the gateway', async (t) => {
  const everything = await startEverything('sse');
  t.teardown(() => everything.stop());
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, {
    name: 'Everything',
    path: '/everything',
    proxy_pass_url: everything.url.replace(/\/sse$/, ''),
    supported_transports: ['sse'],
  });
  const client = await sseClient(t, `${base}/everything/sse`, admin, 'sse');
  t.ok((await client.listTools()).tools.some((x) => x.name === 'echo'));
  const out = await client.callTool({ name: 'echo', arguments: { message: 'over sse' } });
  t.match(JSON.stringify(out.content), /over sse/);

  // A caller limited to `echo`: the list that arrives on the stream is filtered, the call refused.
  await withScope(app, {
    _id: 'sse-echo',
    server_access: [
      {
        server: 'everything',
        methods: ['initialize', 'notifications/initialized', 'tools/list', 'tools/call'],
        tools: ['echo'],
      },
    ],
  });
  const limitedHeaders = {
    'x-authorization': `Bearer ${await mintToken(app, { username: 'bob', scopes: ['sse-echo'] })}`,
  };
  const limited = await sseClient(t, `${base}/everything/sse`, limitedHeaders, 'sse-limited');
  t.same(
    (await limited.listTools()).tools.map((x) => x.name),
    ['echo'],
    'tools/list over SSE lists only the tools the caller may call',
  );
  await t.rejects(
    limited.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }),
    /SB_ERR_GATEWAY_DENIED|403/,
    'a tool outside the scope is refused over SSE too',
  );

  const wrongFace = await fetch(`${base}/everything/mcp`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(wrongFace.status, 400, 'an SSE-only server is not served on /mcp as if it spoke streamable HTTP');
  t.match(await wrongFace.json(), { code: 'SB_ERR_GATEWAY_TRANSPORT', detail: /\/everything\/sse/ });
});
