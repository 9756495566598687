import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { freePort } from '../fixtures/free-port.ts';
import { makeApp } from '../helpers/app.ts';
import { registerServer } from '../helpers/registry-servers.ts';
import { asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { startEverything } from '../mcp/servers.ts';

/**
 * The `registry` tools provider's remote mode: a platform-only Switchboard
 * whose tools provider points (`url`) at another Switchboard serving the
 * registry on a loopback port, over real HTTP with a registry token.
 */

const methods = ['initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'ping'];

t.test('remote registry: search, get, invoke over HTTP with the token; token never echoed; down is 503', async (t) => {
  t.setTimeout(300_000);
  const everything = await startEverything('streamableHttp');
  t.teardown(() => everything.stop());

  // The registry side: its own process-like app on a loopback port, recording the bearer of every request.
  const seen: Array<{ url: string; authorization?: string }> = [];
  const registry = await makeApp(
    t,
    { registry: { health: { interval_seconds: 0, timeout_seconds: 5 } } },
    {
      surfaces: ['registry'],
      beforeSurfaces: (app: FastifyInstance) => {
        app.addHook('onRequest', async (req) => {
          seen.push({ url: req.url, authorization: req.headers.authorization });
        });
      },
    },
  );
  await registry.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => registry.server.closeAllConnections());
  const base = `http://127.0.0.1:${(registry.server.address() as { port: number }).port}`;
  const admin = await asUser(registry, ['mcp-registry-admin'], 'alice');
  await registerServer(t, registry, admin, { name: 'Everything', path: '/everything', proxy_pass_url: everything.url });
  const refreshed = await registry.inject({ method: 'POST', url: '/api/servers/everything/refresh', headers: admin });
  t.equal(refreshed.json().health_status, 'healthy', refreshed.body);
  await withScope(registry, {
    _id: 'remote-tools',
    server_access: [{ server: 'everything', methods, tools: ['echo', 'get-sum', 'get-resource-reference'] }],
  });
  await withScope(registry, { _id: 'echo-only', server_access: [{ server: 'everything', methods, tools: ['echo'] }] });
  const token = await mintToken(registry, { username: 'platform-svc', scopes: ['remote-tools'] });

  // The platform side: no registry surface of its own; tools come from the remote one.
  const dead = `http://127.0.0.1:${await freePort()}`;
  const platform = await makeApp(
    t,
    {
      providers: {
        tools: {
          default: 'remote',
          instances: {
            remote: { type: 'registry', options: { url: base, token } },
            gone: { type: 'registry', options: { url: dead, token } },
          },
        },
      },
    },
    { surfaces: ['platform'] },
  );
  const call = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    platform.inject({
      method,
      url: `/api/v1/tools${url}`,
      headers,
      ...(payload ? { payload: payload as object } : {}),
    });
  const bodies: string[] = [];
  const keep = <R extends { body: string }>(r: R) => {
    bodies.push(r.body);
    return r;
  };

  const search = keep(await call('GET', '/search?query=echo&max_results=5'));
  t.equal(search.statusCode, 200, search.body);
  t.ok(
    search.json().tools.some((x: { name: string }) => x.name === 'everything__echo'),
    'search finds everything__echo on the remote registry',
  );
  const listed = keep(await call('GET', '/'));
  t.ok(listed.json().tools.some((x: { name: string }) => x.name === 'everything__get-sum'));

  const one = keep(await call('GET', '/everything__echo'));
  t.equal(one.statusCode, 200, one.body);
  t.match(one.json().input_schema, { type: 'object', properties: { message: {} } }, 'with its real input schema');

  const echoed = keep(await call('POST', '/everything__echo/invoke', { params: { message: 'over the wire' } }));
  t.equal(echoed.statusCode, 200, echoed.body);
  t.match(echoed.json(), { tool_name: 'everything__echo', status: 'success' });
  t.match(JSON.stringify(echoed.json().result), 'over the wire');
  const sum = keep(await call('POST', '/everything__get-sum/invoke', { params: { a: 40, b: 2 } }));
  t.match(JSON.stringify(sum.json().result), '42');

  const bad = keep(await call('POST', '/everything__echo/invoke', { params: { message: 7 } }));
  t.equal(bad.statusCode, 400, 'the schema check runs on the remote tool too');
  const failing = keep(await call('POST', '/everything__get-resource-reference/invoke', { params: { resourceId: 0 } }));
  t.equal(failing.statusCode, 502);
  t.match(failing.json().detail, /Invalid resourceId: 0/);
  t.equal(keep(await call('POST', '/everything__nope/invoke', { params: {} })).statusCode, 404);

  // The configured token went to the registry, on the listing and on the MCP gateway path.
  const withToken = seen.filter((s) => s.authorization === `Bearer ${token}`);
  t.ok(
    withToken.some((s) => s.url.startsWith('/api/server_details')),
    'the registry listing was read with the token',
  );
  t.ok(
    withToken.some((s) => s.url.startsWith('/everything/mcp')),
    'the MCP call went through the gateway with it',
  );
  keep(await platform.inject({ method: 'GET', url: '/api/v1/providers' }));
  keep(await platform.inject({ method: 'GET', url: '/api/v1/providers/status' }));
  keep(await call('GET', '/servers'));
  for (const b of bodies) t.notMatch(b, token.slice(-24), 'the token is never in an answer');

  // A caller's own registry token (X-Authorization) is used instead, with its own narrower scopes.
  const own = { 'x-authorization': `Bearer ${await mintToken(registry, { username: 'bob', scopes: ['echo-only'] })}` };
  t.equal((await call('POST', '/everything__echo/invoke', { params: { message: 'mine' } }, own)).statusCode, 200);
  const refused = await call('POST', '/everything__get-sum/invoke', { params: { a: 1, b: 2 } }, own);
  t.equal(refused.statusCode, refused.statusCode === 404 ? 404 : 403, 'a tool outside the caller’s scopes is refused');
  t.ok([403, 404].includes(refused.statusCode), refused.body);

  // A remote registry that cannot be reached is a 503 naming it.
  const gone = { 'x-provider-tools': 'gone' };
  for (const [method, url, payload] of [
    ['GET', '/search?query=echo', undefined],
    ['POST', '/everything__echo/invoke', { params: { message: 'x' } }],
    ['GET', '/servers', undefined],
    ['POST', '/servers', { name: 'another', url: everything.url }],
  ] as const) {
    const r = await call(method, url, payload, gone);
    t.equal(r.statusCode, 503, `${method} ${url}: ${r.body}`);
    t.equal(r.json().code, 'SB_ERR_TOOLS_REGISTRY_UNAVAILABLE');
    t.match(r.json().detail, `The registry at ${dead} cannot be reached`);
    t.notMatch(r.json().detail, /cannot be reached.*cannot be reached/, 'said once');
    t.notMatch(r.body, token.slice(-24));
  }

  // And the same once the live one goes away after it has served (catalog cached, MCP session open).
  registry.server.closeAllConnections();
  await registry.close();
  const after = await call('POST', '/everything__echo/invoke', { params: { message: 'anyone there?' } });
  t.equal(after.statusCode, 503, after.body);
  t.match(after.json(), { code: 'SB_ERR_TOOLS_REGISTRY_UNAVAILABLE', detail: base });
});
