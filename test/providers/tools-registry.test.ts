import t from 'tap';
import type { ToolCaller } from '../../core/primitives/tools.ts';
import { registryTools } from '../../providers/registry-tools/index.ts';
import type { Runner } from '../conformance/kit.ts';
import { toolsSuite } from '../conformance/tools.ts';
import { makeApp, providerContextOf } from '../helpers/app.ts';
import { registerServer } from '../helpers/registry-servers.ts';
import { asUser, withScope } from '../helpers/registry-auth.ts';
import { startEverything } from '../mcp/servers.ts';
import { startBearerServer } from '../mcp/bearer-server.ts';

t.test("registry tools passes the tools conformance suite against this process's registry", async (t) => {
  const everything = await startEverything('streamableHttp');
  t.teardown(() => everything.stop());
  const bearer = await startBearerServer('conf-backend-secret');
  t.teardown(() => bearer.stop());
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 5 } } });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  await registerServer(t, app, admin, { name: 'Everything', path: '/everything', proxy_pass_url: everything.url });
  await registerServer(t, app, admin, {
    name: 'Locked',
    path: '/locked',
    proxy_pass_url: bearer.url,
    auth_scheme: 'bearer',
    auth_credential: 'conf-backend-secret',
  });
  for (const s of ['everything', 'locked'])
    await app.inject({ method: 'POST', url: `/api/servers/${s}/refresh`, headers: admin });
  const methods = ['initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'ping'];
  await withScope(app, {
    _id: 'conf-tools',
    server_access: [
      { server: 'everything', methods, tools: ['*'] },
      { server: 'locked', methods, tools: ['add'] },
      { server: 'conf-server', methods, tools: ['*'] },
    ],
    ui_permissions: { register_service: ['all'], list_service: ['all'] },
  });
  const caller: ToolCaller = {
    principal: { id: 'conf-user', type: 'user', is_admin: false, groups: [], scopes: [] },
    headers: {},
  };

  await toolsSuite(t as unknown as Runner, {
    make: async () =>
      registryTools.create(
        'conf',
        { principal_scopes: { 'conf-user': ['conf-tools'] }, catalog_ttl_seconds: 0 },
        providerContextOf(app),
      ),
    caller,
    invocable: {
      backed: true,
      tool: { name: 'everything__get-sum', description: '', input_schema: {} },
      params: { a: 40, b: 2 },
      check: (t, result) => t.match(JSON.stringify(result), '42'),
      failing: {
        tool: { name: 'everything__get-resource-reference', description: '', input_schema: {} },
        params: { resourceId: 0 },
      },
    },
    deniedTool: { name: 'locked__secret_echo', params: { message: 'x' } },
    serverUrl: everything.url,
    skip: [
      {
        reason: 'the registry provider declares every capability',
        tests: ['capabilities declared false reject with 501'],
      },
    ],
  });
});
