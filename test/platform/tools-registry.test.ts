import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { registerServer } from '../helpers/registry-servers.ts';
import { asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { startEverything } from '../mcp/servers.ts';
import { startBearerServer } from '../mcp/bearer-server.ts';

/**
 * The `registry` tools provider through /api/v1/tools, against real MCP
 * servers registered in this process's registry and called through its
 * gateway with the official SDK client.
 */

const BACKEND_SECRET = 'backend-cred-8d1f0c2e';

const allMethods = (server: string, tools: string[]) => ({
  server,
  methods: ['initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'ping'],
  tools,
});

async function setup(t: Test) {
  const everything = await startEverything('streamableHttp');
  t.teardown(() => everything.stop());
  const bearer = await startBearerServer(BACKEND_SECRET);
  t.teardown(() => bearer.stop());
  const app = await makeApp(t, {
    registry: { health: { interval_seconds: 0, timeout_seconds: 5 } },
    providers: {
      tools: {
        instances: {
          noop: { type: 'noop' },
          // noop auth's principal is `noop`: the admin maps it to one narrow scope.
          registry: { type: 'registry', options: { principal_scopes: { noop: ['platform-bearer-add'] } } },
          unmapped: { type: 'registry' },
          hasty: {
            type: 'registry',
            options: { timeout_seconds: 1, principal_scopes: { noop: ['platform-everything'] } },
          },
        },
      },
    },
  });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  await registerServer(t, app, admin, { name: 'Everything', path: '/everything', proxy_pass_url: everything.url });
  await registerServer(t, app, admin, {
    name: 'Bearer',
    path: '/bearer',
    proxy_pass_url: bearer.url,
    auth_scheme: 'bearer',
    auth_credential: BACKEND_SECRET,
  });
  for (const s of ['everything', 'bearer']) {
    const r = await app.inject({ method: 'POST', url: `/api/servers/${s}/refresh`, headers: admin });
    t.equal(r.json().health_status, 'healthy', `${s} is healthy after a check: ${r.body}`);
  }
  await withScope(app, { _id: 'platform-bearer-add', server_access: [allMethods('bearer', ['add'])] });
  await withScope(app, { _id: 'platform-everything', server_access: [allMethods('everything', ['*'])] });
  await withScope(app, {
    _id: 'everything-user',
    server_access: [allMethods('everything', ['echo', 'get-sum', 'get-resource-reference'])],
  });
  const user = {
    'x-authorization': `Bearer ${await mintToken(app, { username: 'bob', scopes: ['everything-user'] })}`,
  };
  return { app, admin, user, bearer };
}

const invoke = (app: FastifyInstance, name: string, params: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: `/api/v1/tools/${name}/invoke`, headers, payload: { params } });

t.test('registry tools: search, invoke, schema checks, MCP errors, scopes and credentials', async (t) => {
  const { app, user, bearer } = await setup(t);

  const providers = await app.inject({ method: 'GET', url: '/api/v1/providers' });
  t.equal(
    providers.json().tools?.default ?? providers.json().providers?.tools?.default,
    'registry',
    'the registry provider is the default tools provider where the registry runs',
  );

  const search = await app.inject({
    method: 'GET',
    url: '/api/v1/tools/search?query=echo&max_results=5',
    headers: user,
  });
  t.equal(search.statusCode, 200, search.body);
  t.ok(
    search.json().matches.some((m: { tool: { name: string } }) => m.tool.name === 'everything__echo'),
    'search finds everything__echo',
  );
  t.ok(search.json().matches.length <= 5, 'max_results caps the list');
  // The route fuzzer found both answering 503 "registry unavailable": they are the caller's to fix.
  const long = await app.inject({ method: 'GET', url: `/api/v1/tools/search?query=${'y'.repeat(513)}`, headers: user });
  t.equal(long.statusCode, 422, 'a query longer than the registry takes is refused at the route');
  const blank = await app.inject({ method: 'GET', url: '/api/v1/tools/search?query=%20%20%20', headers: user });
  t.equal(blank.statusCode, 422, blank.body);
  t.match(blank.json(), { code: 'SB_ERR_TOOLS_SEARCH_REFUSED', detail: /registry refused this search: .*empty/ });

  const one = await app.inject({ method: 'GET', url: '/api/v1/tools/everything__echo', headers: user });
  t.equal(one.statusCode, 200);
  t.match(one.json().input_schema, { type: 'object', properties: { message: {} } }, "the tool's real input schema");

  const echoed = await invoke(app, 'everything__echo', { message: 'hello through the gateway' }, user);
  t.equal(echoed.statusCode, 200, echoed.body);
  t.match(echoed.json(), { tool_name: 'everything__echo', status: 'success' });
  t.match(JSON.stringify(echoed.json().result.content), 'hello through the gateway', 'the echo comes back');

  const sum = await invoke(app, 'everything__get-sum', { a: 19, b: 23 }, user);
  t.match(JSON.stringify(sum.json().result.content), '42');

  const bad = await invoke(app, 'everything__echo', { message: 5 }, user);
  t.equal(bad.statusCode, 400, 'params that break the inputSchema are refused');
  t.equal(bad.json().code, 'SB_ERR_TOOLS_INVALID_PARAMS');
  t.match(bad.json().detail, /message/);

  const failing = await invoke(app, 'everything__get-resource-reference', { resourceId: 0 }, user);
  t.equal(failing.statusCode, 502, 'a tool that errors is a 502');
  t.match(failing.json(), { code: 'SB_ERR_TOOLS_EXECUTION_FAILED', detail: /Invalid resourceId: 0/ });

  const unknown = await invoke(app, 'everything__no-such-tool', {}, user);
  t.equal(unknown.statusCode, 404);
  t.equal(unknown.json().code, 'SB_ERR_TOOLS_NOT_FOUND');
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/tools/nope__nothing', headers: user })).statusCode, 404);

  // The caller's own registry scopes: a tool of a visible server that the scopes do not grant.
  const refusedForUser = await invoke(app, 'everything__get-tiny-image', {}, user);
  t.equal(refusedForUser.statusCode, 403, refusedForUser.body);
  t.match(refusedForUser.json(), { code: 'SB_ERR_TOOLS_DENIED', detail: /get-tiny-image/ });

  // No registry token: the admin's principal mapping decides (noop -> platform-bearer-add).
  const added = await invoke(app, 'bearer__add', { a: 2, b: 3 });
  t.equal(added.statusCode, 200, added.body);
  t.match(JSON.stringify(added.json().result), '5');
  const injected = bearer.seen.filter((h) => h.authorization === `Bearer ${BACKEND_SECRET}`);
  t.ok(injected.length > 0, 'the stored credential reached the backend');
  t.notMatch(added.body, BACKEND_SECRET, 'and never the response');
  t.notOk(
    bearer.seen.some((h) => h['x-authorization']),
    'the caller token is not forwarded',
  );

  const before = bearer.seen.length;
  const denied = await invoke(app, 'bearer__secret_echo', { message: 'psst' });
  t.equal(denied.statusCode, 403, 'a tool the mapped scopes do not grant is refused');
  t.equal(denied.json().code, 'SB_ERR_TOOLS_DENIED');
  t.equal(bearer.seen.length, before, 'the backend never saw the refused call');

  // A principal the mapping does not name gets nothing: no registry tools, and 403 on a call.
  const unmappedList = await app.inject({
    method: 'GET',
    url: '/api/v1/tools',
    headers: { 'x-provider-tools': 'unmapped' },
  });
  t.equal(unmappedList.statusCode, 200);
  t.same(
    unmappedList.json().tools.filter((x: { name: string }) => x.name.includes('__')),
    [],
    'no registry tools without registry scopes',
  );
  const unmapped = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/bearer__add/invoke',
    headers: { 'x-provider-tools': 'unmapped' },
    payload: { params: { a: 1, b: 1 } },
  });
  t.equal(unmapped.statusCode, 403, 'a registry tool is refused to a principal with no registry scopes');
  t.match(unmapped.json(), {
    code: 'SB_ERR_TOOLS_DENIED',
    detail: /principal 'noop' has no registry scopes.*principal_scopes/,
  });
  const unmappedWithToken = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/everything__echo/invoke',
    headers: { 'x-provider-tools': 'unmapped', ...user },
    payload: { params: { message: 'own token' } },
  });
  t.equal(unmappedWithToken.statusCode, 200, 'the same provider serves a caller that brings a registry token');
});

t.test('registry tools: a slow tool is a 504; servers are listed and registered through the registry', async (t) => {
  const { app, admin } = await setup(t);
  const slow = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/everything__trigger-long-running-operation/invoke',
    headers: { 'x-provider-tools': 'hasty' },
    payload: { params: { duration: 4, steps: 2 } },
  });
  t.equal(slow.statusCode, 504, slow.body);
  t.equal(slow.json().code, 'SB_ERR_TOOLS_TIMEOUT');

  const servers = await app.inject({
    method: 'GET',
    url: '/api/v1/tools/servers',
    headers: { 'x-authorization': admin.authorization },
  });
  t.equal(servers.statusCode, 200, servers.body);
  t.same(
    servers
      .json()
      .servers.map((s: { name: string }) => s.name)
      .sort(),
    ['bearer', 'everything'],
  );
  t.match(
    servers.json().servers.find((s: { name: string }) => s.name === 'everything'),
    { health: 'healthy' },
  );
  t.notMatch(servers.body, BACKEND_SECRET);

  const everything2 = await startEverything('streamableHttp');
  t.teardown(() => everything2.stop());
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/servers',
    headers: { 'x-authorization': admin.authorization },
    payload: {
      name: 'second',
      url: everything2.url,
      config: { description: 'another everything', auth_scheme: 'bearer', auth_credential: 'never-shown-123' },
    },
  });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { name: 'second', url: everything2.url, config: { description: 'another everything' } });
  t.notMatch(created.body, 'never-shown-123', 'a credential given at registration is not echoed');
  const stored = await app.inject({ method: 'GET', url: '/api/servers/second', headers: admin });
  t.equal(stored.statusCode, 200, 'the server is in the registry');
  t.equal(stored.json().auth_credential_encrypted, true, 'with its credential encrypted there');
  const got = await app.inject({
    method: 'GET',
    url: '/api/v1/tools/servers/second',
    headers: { 'x-authorization': admin.authorization },
  });
  t.equal(got.statusCode, 200);
  t.equal(
    (
      await app.inject({
        method: 'GET',
        url: '/api/v1/tools/servers/nope',
        headers: { 'x-authorization': admin.authorization },
      })
    ).statusCode,
    404,
  );

  // Registering needs the registry's register permission: the mapped noop principal lacks it.
  const refused = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/servers',
    payload: { name: 'third', url: everything2.url },
  });
  t.equal(refused.statusCode, 403, refused.body);
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/servers/third', headers: admin })).statusCode,
    404,
    'and nothing was stored',
  );

  // A standalone record cannot use the separator.
  const sep = await app.inject({ method: 'POST', url: '/api/v1/tools', payload: { name: 'a__b', description: 'x' } });
  t.equal(sep.statusCode, 400);
  t.match(sep.json().detail, /__/);
});
