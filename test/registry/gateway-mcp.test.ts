import t, { type Test } from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';
import { openStore } from '../../core/store.ts';
import {
  listenOnLoopback as listen,
  listeningRegistry as listening,
  registerServer as register,
} from '../helpers/registry-servers.ts';
import { mintToken, withScope } from '../helpers/registry-auth.ts';
import { startEverything, freePort } from '../mcp/servers.ts';
import { startBearerServer } from '../mcp/bearer-server.ts';

/**
 * The built-in MCP gateway through the whole app: real registration, real
 * minted tokens and scopes, real MCP servers behind it.
 */

async function sdkClient(t: Test, url: string, headers: Record<string, string>) {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  t.teardown(() => client.close());
  return { client, transport };
}

const rpc = (id: number, method: string, params: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

/** An HTTP backend that records every request (headers and body) and answers each JSON-RPC request with an empty result. */
async function recordingBackend(t: Test) {
  const seen: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    seen.push({ headers: req.headers, body });
    const id = body ? (JSON.parse(body) as { id?: unknown }).id : undefined;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, result: {} }));
  });
  await listen(t, server);
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

const everythingScope = (id: string, tools: string[]) => ({
  _id: id,
  server_access: [
    {
      server: 'everything',
      methods: ['initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'ping'],
      tools,
    },
  ],
});

t.test('the SDK client lists and calls tools with a minted token, in X-Authorization or Authorization', async (t) => {
  const everything = await startEverything('streamableHttp');
  t.teardown(() => everything.stop());
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, {
    name: 'Everything',
    path: '/everything',
    proxy_pass_url: everything.url.replace(/\/mcp$/, ''),
  });
  await withScope(app, everythingScope('everything-echo', ['echo']));
  const token = await mintToken(app, { username: 'bob', scopes: ['everything-echo'] });

  for (const header of ['x-authorization', 'authorization']) {
    const { client } = await sdkClient(t, `${base}/everything/mcp`, { [header]: `Bearer ${token}` });
    t.same(
      (await client.listTools()).tools.map((x) => x.name),
      ['echo'],
      `${header}: tools/list lists only the tools the caller may call`,
    );
    const out = await client.callTool({ name: 'echo', arguments: { message: `via ${header}` } });
    t.match(JSON.stringify(out.content), `via ${header}`, `${header}: the call reaches the backend and returns`);
    const refused = (await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }).then(
      () => undefined,
      (e: unknown) => e,
    )) as { code?: number; message?: string } | undefined;
    t.equal(refused?.code, 403, `${header}: a tool outside the scopes is refused with 403`);
    t.match(refused?.message, /SB_ERR_GATEWAY_DENIED/, `${header}: the SDK error carries the gateway's reason`);
    const again = await client.callTool({ name: 'echo', arguments: { message: 'still here' } });
    t.match(JSON.stringify(again.content), 'still here', `${header}: the session survives a refusal`);
  }

  // The refusal as a plain HTTP client sees it: 403 JSON saying which tool and what to do.
  const denied = await post(
    `${base}/everything/mcp`,
    rpc(7, 'tools/call', { name: 'get-sum', arguments: { a: 1, b: 2 } }),
    { authorization: `Bearer ${token}` },
  );
  t.equal(denied.status, 403);
  const body = (await denied.json()) as { code: string; detail: string };
  t.equal(body.code, 'SB_ERR_GATEWAY_DENIED');
  t.match(body.detail, /get-sum/, 'the detail names the refused tool');
  t.match(body.detail, /scope/i, 'the detail says scopes are what to change');

  // An admin token sees every tool, so the filter is per caller, not a fixed list.
  const { client: adminClient } = await sdkClient(t, `${base}/everything/mcp`, admin);
  const all = (await adminClient.listTools()).tools.map((x) => x.name);
  t.ok(all.includes('echo') && all.includes('get-sum'), 'the admin sees the unfiltered list');

  // A caller whose scopes do not name the server at all cannot even initialize.
  await withScope(app, { _id: 'elsewhere-only', server_access: [{ server: 'elsewhere', methods: ['all'] }] });
  const stranger = await mintToken(app, { username: 'eve', scopes: ['elsewhere-only'] });
  const init = await post(
    `${base}/everything/mcp`,
    rpc(1, 'initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } }),
    { authorization: `Bearer ${stranger}` },
  );
  t.equal(init.status, 403);
  t.match(await init.json(), { code: 'SB_ERR_GATEWAY_DENIED' });
  const anonymous = await post(`${base}/everything/mcp`, rpc(1, 'tools/list'));
  t.equal(anonymous.status, 401, 'no token, no gateway');
});

t.test('the backend credential and custom headers are injected; the caller token is not forwarded', async (t) => {
  const backend = await recordingBackend(t);
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, {
    name: 'Keyed',
    path: '/keyed',
    proxy_pass_url: backend.url,
    auth_scheme: 'api_key',
    auth_credential: 'backend-api-key',
    headers: { 'X-Team': 'blue' },
  });
  await register(t, app, admin, {
    name: 'Bearer',
    path: '/bearer',
    proxy_pass_url: backend.url,
    auth_scheme: 'bearer',
    auth_credential: 'backend-bearer',
  });
  const token = await mintToken(app, { username: 'bob', scopes: ['mcp-registry-admin'] });

  const viaGateway = (marker: string) => backend.seen.filter((r) => r.body.includes(marker));
  for (const [path, header] of [
    ['/keyed', 'authorization'],
    ['/bearer', 'x-authorization'],
  ] as const) {
    const marker = `marker-${path.slice(1)}`;
    const res = await post(`${base}${path}/mcp`, rpc(1, 'ping', { marker }), {
      [header]: `Bearer ${token}`,
      cookie: 'mcp_gateway_session=caller-cookie',
    });
    t.equal(res.status, 200, await res.clone().text());
    const text = await res.text();
    t.notMatch(text, /backend-api-key|backend-bearer/, 'the backend credential is not in the answer');
    const got = viaGateway(marker);
    t.equal(got.length, 1, `${path}: the request reached the backend`);
    const h = got[0].headers;
    t.notOk(h['x-authorization'], `${path}: the caller's X-Authorization stays at the gateway`);
    t.notOk(h.cookie, `${path}: the caller's cookie stays at the gateway`);
    t.notMatch(JSON.stringify(h), token, `${path}: the caller's token appears nowhere in the forwarded headers`);
    if (path === '/keyed') {
      t.equal(h['x-api-key'], 'backend-api-key', 'api_key credential in its header');
      t.equal(h['x-team'], 'blue', 'custom headers forwarded');
      t.notOk(h.authorization, 'the caller Authorization header is not forwarded');
    } else {
      t.equal(h.authorization, 'Bearer backend-bearer', 'bearer credential in Authorization');
    }
  }
});

t.test("a backend refusing the stored credential is a 502 saying so, not the caller's 401", async (t) => {
  const backend = await startBearerServer('first');
  t.teardown(() => backend.stop());
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, {
    name: 'Rotating',
    path: '/rotating',
    proxy_pass_url: backend.url.replace(/\/mcp$/, ''),
    auth_scheme: 'bearer',
    auth_credential: 'first',
  });
  const before = await sdkClient(t, `${base}/rotating/mcp`, admin);
  t.ok((await before.client.listTools()).tools.length > 0, 'works while the credential is good');
  // Closed before the backend changes, so its background stream does not race the failures below.
  await before.client.close();

  backend.setToken('second');
  const init = rpc(1, 'initialize', {
    protocolVersion: '2025-03-26',
    capabilities: {},
    clientInfo: { name: 'x', version: '1' },
  });
  const refused = await post(`${base}/rotating/mcp`, init, admin);
  t.equal(refused.status, 502, 'the gateway, not the caller, is what the backend refused');
  const body = (await refused.json()) as { code: string; detail: string };
  t.equal(body.code, 'SB_ERR_GATEWAY_BACKEND_AUTH');
  t.match(
    body.detail,
    /\/rotating.*stored credential.*auth-credential/,
    'the detail says which server and what to update',
  );
  t.notMatch(body.detail, /first|second/, 'no credential in the error');
  t.notOk(refused.headers.get('www-authenticate'), 'no challenge that would send the client into its own login');
  const stream = await fetch(`${base}/rotating/mcp`, { headers: { ...admin, accept: 'text/event-stream' } });
  t.equal(stream.status, 502, 'the GET stream is refused the same way');
  await stream.body?.cancel();

  const upd = await app.inject({
    method: 'PATCH',
    url: '/api/servers/rotating/auth-credential',
    headers: admin,
    payload: { auth_scheme: 'bearer', auth_credential: 'second' },
  });
  t.equal(upd.statusCode, 200, upd.body);
  const { client } = await sdkClient(t, `${base}/rotating/mcp`, admin);
  t.ok((await client.listTools()).tools.length > 0, 'the updated credential is used at once');
});

t.test('a tools/list answer that is not JSON is a 502 naming the server, never passed on unfiltered', async (t) => {
  const garbage = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"tools": [oops'));
  });
  await listen(t, garbage);
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, {
    name: 'Garbage',
    path: '/garbage',
    proxy_pass_url: `http://127.0.0.1:${(garbage.address() as { port: number }).port}`,
  });
  const res = await post(`${base}/garbage/mcp`, rpc(1, 'tools/list'), admin);
  t.equal(res.status, 502);
  t.match(await res.json(), { code: 'SB_ERR_GATEWAY_BACKEND_INVALID', detail: /\/garbage/ });
});

t.test('tools/list filtering holds when the backend splits one SSE event over several data: lines', async (t) => {
  // SSE joins the data: lines of one event with newlines; a pretty-printing backend sends JSON that way.
  const tools = {
    tools: [
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'secret', inputSchema: { type: 'object' } },
    ],
  };
  const split = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    const msg = JSON.parse(body) as { id?: number; method?: string };
    const answer = JSON.stringify(
      { jsonrpc: '2.0', id: msg.id, result: msg.method === 'tools/list' ? tools : {} },
      null,
      2,
    );
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(
      `event: message\r\n${answer
        .split('\n')
        .map((l) => `data: ${l}`)
        .join('\r\n')}\r\n\r\n`,
    );
  });
  await listen(t, split);
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, {
    name: 'Split',
    path: '/split',
    proxy_pass_url: `http://127.0.0.1:${(split.address() as { port: number }).port}`,
  });
  await withScope(app, {
    _id: 'split-echo',
    server_access: [{ server: 'split', methods: ['tools/list', 'tools/call'], tools: ['echo'] }],
  });
  const token = await mintToken(app, { username: 'bob', scopes: ['split-echo'] });
  const res = await post(`${base}/split/mcp`, rpc(4, 'tools/list'), { authorization: `Bearer ${token}` });
  t.equal(res.status, 200);
  const text = await res.text();
  const data = text
    .split(/\r?\n\r?\n/)
    .map((ev) =>
      ev
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n'),
    )
    .filter(Boolean);
  t.equal(data.length, 1, 'one event');
  const listed = (JSON.parse(data[0]) as { result: { tools: Array<{ name: string }> } }).result.tools.map(
    (x) => x.name,
  );
  t.same(listed, ['echo'], 'the tool the caller may not call is not listed');
});

t.test('disabled, security-pending and unknown servers are refused with a clear error', async (t) => {
  const backend = await recordingBackend(t);
  const { app, base, admin } = await listening(t);
  await register(t, app, admin, { name: 'Off', path: '/off', proxy_pass_url: backend.url });
  // The registration starts a first health check of /off; it must be over before counting what reaches the backend.
  await app.inject({ method: 'POST', url: '/api/servers/off/refresh', headers: admin });
  const off = await app.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: admin,
    payload: { path: '/off', new_state: false },
  });
  t.equal(off.statusCode, 200, off.body);
  const catalog = catalogOf(app);
  const realScanner = catalog.scanner;
  catalog.scanner = { ...realScanner, server: async () => ({ blocked: true, summary: { critical: 1 } }) };
  await register(t, app, admin, { name: 'Held', path: '/held', proxy_pass_url: backend.url });
  catalog.scanner = realScanner;
  const before = backend.seen.length;

  const disabled = await post(`${base}/off/mcp`, rpc(1, 'tools/list'), admin);
  t.equal(disabled.status, 403);
  const d = (await disabled.json()) as { code: string; detail: string };
  t.equal(d.code, 'SB_ERR_GATEWAY_DISABLED');
  t.match(d.detail, /\/off.*disabled/);
  const held = await post(`${base}/held/mcp`, rpc(1, 'tools/list'), admin);
  t.equal(held.status, 403);
  const h = (await held.json()) as { code: string; detail: string };
  t.equal(h.code, 'SB_ERR_GATEWAY_SECURITY_PENDING');
  t.match(h.detail, /security/);
  const unknown = await post(`${base}/nowhere/mcp`, rpc(1, 'tools/list'), admin);
  t.equal(unknown.status, 404);
  t.match(await unknown.json(), { code: 'SB_ERR_GATEWAY_UNKNOWN_SERVER', detail: /\/nowhere/ });
  t.equal(backend.seen.length, before, 'nothing refused reached the backend');
});

t.test(
  'a backend that does not answer in time is a 504 naming the server; one that is down is a 503 naming it',
  async (t) => {
    const held: Array<() => void> = [];
    const slow = createServer((req, res) => {
      // Headers are never sent while the test runs; teardown ends the exchange.
      held.push(() => res.destroy());
      req.resume();
    });
    await listen(t, slow);
    t.teardown(() => {
      for (const end of held) end();
    });
    const downPort = await freePort();
    const { app, base, admin } = await listening(t, {
      health: { interval_seconds: 0, timeout_seconds: 0.2, gateway_timeout_seconds: 0.3 },
    });
    await register(t, app, admin, {
      name: 'Slow',
      path: '/slow',
      proxy_pass_url: `http://127.0.0.1:${(slow.address() as { port: number }).port}`,
    });
    await register(t, app, admin, { name: 'Gone', path: '/gone', proxy_pass_url: `http://127.0.0.1:${downPort}` });

    const timeout = await post(`${base}/slow/mcp`, rpc(1, 'tools/list'), admin);
    t.equal(timeout.status, 504);
    const tb = (await timeout.json()) as { code: string; detail: string };
    t.equal(tb.code, 'SB_ERR_GATEWAY_TIMEOUT');
    t.match(tb.detail, /\/slow/, 'the detail names the server');
    t.match(tb.detail, /300 ms/, 'and the time it was given');

    const down = await post(`${base}/gone/mcp`, rpc(1, 'tools/list'), admin);
    t.equal(down.status, 503);
    const db = (await down.json()) as { code: string; detail: string };
    t.equal(db.code, 'SB_ERR_GATEWAY_BACKEND_DOWN');
    t.match(db.detail, /\/gone.*unreachable/);

    // A stream opened with GET gets the same treatment.
    const getDown = await fetch(`${base}/gone/mcp`, { headers: { ...admin, accept: 'text/event-stream' } });
    t.equal(getDown.status, 503);
  },
);

t.test('a token bound to one server works for it through the gateway and is refused for another', async (t) => {
  const backend = await startBearerServer('shared-secret');
  t.teardown(() => backend.stop());
  const { app, base, admin } = await listening(t);
  for (const path of ['/alpha', '/beta']) {
    await register(t, app, admin, {
      name: path.slice(1),
      path,
      proxy_pass_url: backend.url.replace(/\/mcp$/, ''),
      auth_scheme: 'bearer',
      auth_credential: 'shared-secret',
    });
  }
  const minted = await app.inject({
    method: 'POST',
    url: '/api/tokens/generate',
    headers: admin,
    payload: { resource: { type: 'server', id: '/alpha/' }, expires_in_hours: 1 },
  });
  t.equal(minted.statusCode, 200, minted.body);
  const bound = minted.json().access_token as string;

  const { client } = await sdkClient(t, `${base}/alpha/mcp`, { 'x-authorization': `Bearer ${bound}` });
  const sum = await client.callTool({ name: 'add', arguments: { a: 1, b: 41 } });
  t.match(JSON.stringify(sum.content), /"42"/, 'the bound token works on its own server');

  const other = await post(
    `${base}/beta/mcp`,
    rpc(1, 'initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } }),
    { 'x-authorization': `Bearer ${bound}` },
  );
  t.equal(other.status, 403);
  const ob = (await other.json()) as { code: string; detail: string };
  t.equal(ob.code, 'SB_ERR_TOKEN_RESOURCE_BOUND');
  t.match(ob.detail, /alpha/, 'the detail says what the token is bound to');
  const otherSse = await fetch(`${base}/beta/sse`, { headers: { 'x-authorization': `Bearer ${bound}` } });
  t.equal(otherSse.status, 403, 'the SSE face of another server is refused too');
});

t.test('link-local and metadata backends are refused by the gateway unless the config allows link-local', async (t) => {
  // Registered while the config allowed them (port 9, so nothing could answer even if reachable); the config
  // then changes and the same records are used
  // (the check happens at use time, not only at registration).
  const store = await openStore({ backend: 'memory' });
  const allowed = await listening(t, { allow_link_local_backends: true }, store);
  await register(t, allowed.app, allowed.admin, {
    name: 'Metadata',
    path: '/meta',
    proxy_pass_url: 'http://[fd00:ec2::254]:9',
  });
  await register(t, allowed.app, allowed.admin, {
    name: 'LinkLocal',
    path: '/ll',
    proxy_pass_url: 'http://[fe80::1]:9',
  });
  // Allowed: the gateway tries the backend (fe80::1 without a zone cannot be connected to, so 503, not 403).
  const tried = await post(`${allowed.base}/ll/mcp`, rpc(1, 'tools/list'), allowed.admin);
  t.equal(tried.status, 503);
  t.match(await tried.json(), { code: 'SB_ERR_GATEWAY_BACKEND_DOWN', detail: /\/ll/ });

  const { base, admin } = await listening(t, {}, store);
  const meta = await post(`${base}/meta/mcp`, rpc(1, 'tools/list'), admin);
  t.equal(meta.status, 403);
  t.match(await meta.json(), { code: 'SB_ERR_GATEWAY_BLOCKED_ADDRESS', detail: /\/meta.*metadata/ });
  const ll = await post(`${base}/ll/mcp`, rpc(1, 'tools/list'), admin);
  t.equal(ll.status, 403);
  t.match(await ll.json(), { code: 'SB_ERR_GATEWAY_BLOCKED_ADDRESS', detail: /link-local.*allow_link_local_backends/ });
  const sse = await fetch(`${base}/ll/sse`, { headers: admin });
  t.equal(sse.status, 403, 'the SSE face is guarded too');
});

t.test(
  'an expired or refused token is told so (401 invalid_token with the reason), not asked for a token',
  async (t) => {
    const backend = await recordingBackend(t);
    const { app, base, admin } = await listening(t);
    await register(t, app, admin, { name: 'Plain', path: '/plain', proxy_pass_url: backend.url });
    const expired = await mintToken(app, { username: 'bob', scopes: ['mcp-registry-admin'], expiresInSeconds: -60 });
    for (const header of ['x-authorization', 'authorization']) {
      const res = await post(`${base}/plain/mcp`, rpc(1, 'ping'), { [header]: `Bearer ${expired}` });
      t.equal(res.status, 401, header);
      const body = (await res.json()) as { code: string; detail: string };
      t.equal(body.code, 'SB_ERR_GATEWAY_INVALID_TOKEN');
      t.match(body.detail, /expired/, `${header}: the detail says the token expired`);
      t.notMatch(body.detail, /is required/);
      const challenge = res.headers.get('www-authenticate') ?? '';
      t.match(
        challenge,
        /^Bearer error="invalid_token", error_description="[^"]*expired[^"]*"$/,
        'RFC 6750 challenge with the reason',
      );
    }
    const garbage = await post(`${base}/plain/mcp`, rpc(1, 'ping'), { 'x-authorization': 'Bearer not-a-jwt' });
    t.equal(garbage.status, 401);
    t.match(await garbage.json(), { code: 'SB_ERR_GATEWAY_INVALID_TOKEN', detail: /not a JWT/ });
    const none = await post(`${base}/plain/mcp`, rpc(1, 'ping'));
    t.equal(none.status, 401);
    t.match(await none.json(), { code: 'SB_ERR_GATEWAY_UNAUTHENTICATED', detail: /token is required/ });
    t.equal(none.headers.get('www-authenticate'), 'Bearer', 'no token sent: a plain challenge (RFC 6750 3.1)');
    t.notOk(
      backend.seen.some((r) => r.body.includes('"ping"')),
      'no refused call reached the backend',
    );
  },
);
