import t, { type Test } from 'tap';
import Fastify from 'fastify';
import type { UserContext } from '../../plugins/registry/auth/context.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import errors from '../../plugins/errors.ts';
import { registerGateway, type GatewayBackend } from '../../plugins/registry/gateway/proxy.ts';
import { startEverything } from '../mcp/servers.ts';
import { startBearerServer } from '../mcp/bearer-server.ts';

/**
 * The proxy mechanics against real MCP servers, with the registry lookups given
 * as plain functions: callers are identified by their token, and `limited` may
 * only call the `echo` / `add` tools.
 */
async function gatewayApp(t: Test, backends: Record<string, GatewayBackend>) {
  const app = Fastify();
  await app.register(errors);
  app.addHook('onRequest', async (request) => {
    const tok = (request.headers['x-authorization'] as string | undefined)?.replace(/^Bearer /, '');
    if (tok === 'admin' || tok === 'limited') request.user = { username: tok } as UserContext;
  });
  await registerGateway(app, {
    resolve: async (p) => backends[p],
    allowed: (request, _server, method, tool) => {
      if (request.user?.username === 'admin') return true;
      if (method === 'tools/call') return tool === 'echo' || tool === 'add';
      return true;
    },
    timeoutMs: 5000,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

async function connect(t: Test, url: string, token: string, sse = false) {
  const headers = { 'x-authorization': `Bearer ${token}` };
  const transport = sse
    ? new SSEClientTransport(new URL(url), {
        requestInit: { headers },
        eventSourceInit: {
          fetch: (u, init) =>
            fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
        },
      })
    : new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}

t.test('streamable HTTP: list and call through the gateway, refused tools hidden and denied', async (t) => {
  const everything = await startEverything('streamableHttp');
  t.teardown(() => everything.stop());
  const base = await gatewayApp(t, {
    '/everything': {
      path: '/everything',
      enabled: true,
      blocked: false,
      url: everything.url,
      transport: 'streamable-http',
      headers: {},
    },
  });

  const admin = await connect(t, `${base}/everything/mcp`, 'admin');
  const all = (await admin.listTools()).tools.map((x) => x.name);
  t.ok(all.length > 3 && all.includes('echo'), 'admin sees every tool');

  const limited = await connect(t, `${base}/everything/mcp`, 'limited');
  const visible = (await limited.listTools()).tools.map((x) => x.name);
  t.same(visible, ['echo'], 'tools/list only lists the tools the caller may call');
  const out = await limited.callTool({ name: 'echo', arguments: { message: 'hi there' } });
  t.match(JSON.stringify(out.content), /hi there/);
  await t.rejects(limited.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }), /403|Access denied/);
});

t.test('SSE transport through the gateway', async (t) => {
  const everything = await startEverything('sse');
  t.teardown(() => everything.stop());
  const base = await gatewayApp(t, {
    '/legacy': { path: '/legacy', enabled: true, blocked: false, url: everything.url, transport: 'sse', headers: {} },
  });
  const client = await connect(t, `${base}/legacy/sse`, 'admin', true);
  const out = await client.callTool({ name: 'echo', arguments: { message: 'over sse' } });
  t.match(JSON.stringify(out.content), /over sse/);
});

t.test('the stored backend credential is injected; the gateway token is not forwarded', async (t) => {
  const backend = await startBearerServer('backend-secret');
  t.teardown(() => backend.stop());
  const base = await gatewayApp(t, {
    '/guarded': {
      path: '/guarded',
      enabled: true,
      blocked: false,
      url: backend.url,
      transport: 'streamable-http',
      headers: { authorization: 'Bearer backend-secret' },
    },
  });
  const client = await connect(t, `${base}/guarded/mcp`, 'limited');
  const out = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
  t.match(JSON.stringify(out.content), /"5"/);
  t.ok(backend.seen.length > 0);
  t.ok(
    backend.seen.every((h) => h['x-authorization'] === undefined),
    'the caller token stays at the gateway',
  );
});

t.test('refusals: no token, unknown, disabled and security-pending servers', async (t) => {
  const base = await gatewayApp(t, {
    '/off': {
      path: '/off',
      enabled: false,
      blocked: false,
      url: 'http://127.0.0.1:9/mcp',
      transport: 'streamable-http',
      headers: {},
    },
    '/held': {
      path: '/held',
      enabled: false,
      blocked: true,
      url: 'http://127.0.0.1:9/mcp',
      transport: 'streamable-http',
      headers: {},
    },
  });
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
  const post = (path: string, token?: string) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { 'x-authorization': `Bearer ${token}` } : {}) },
      body: init,
    });
  t.equal((await post('/off/mcp')).status, 401);
  t.equal((await post('/nope/mcp', 'admin')).status, 404);
  const off = await post('/off/mcp', 'admin');
  t.equal(off.status, 403);
  t.match(await off.json(), { code: 'SB_ERR_GATEWAY_DISABLED' });
  const held = await post('/held/mcp', 'admin');
  t.match(await held.json(), { code: 'SB_ERR_GATEWAY_SECURITY_PENDING' });
});
