import t from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import { mcpTools } from '../../providers/mcp/index.ts';
import type { Runner } from '../conformance/kit.ts';
import { TOOLS_CASES, toolsSuite } from '../conformance/tools.ts';
import { startEverything } from '../mcp/servers.ts';
import { startBearerServer } from '../mcp/bearer-server.ts';

t.test('mcp tools passes the tools conformance suite against server-everything', async (t) => {
  const everything = await startEverything('streamableHttp');
  t.teardown(() => everything.stop());
  const bearer = await startBearerServer('mcp-provider-secret');
  t.teardown(() => bearer.stop());
  await toolsSuite(t as unknown as Runner, {
    make: async () =>
      mcpTools.create(
        'mcp',
        {
          servers: [
            { name: 'everything', url: everything.url },
            { name: 'locked', url: bearer.url, headers: { authorization: 'Bearer wrong-secret' } },
          ],
        },
        {} as ProviderContext,
      ),
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
    // The server answers 401 to the configured (wrong) credential: a refusal, not a failure.
    deniedTool: { name: 'locked__add', params: { a: 1, b: 2 } },
    serverUrl: everything.url,
    skip: [
      {
        reason: 'mcp serves the tools of its MCP servers: no tool records to register or delete',
        tests: [TOOLS_CASES.registerGet, TOOLS_CASES.list, TOOLS_CASES.search, TOOLS_CASES.remove],
      },
    ],
  });

  const p = await mcpTools.create(
    'mcp',
    { servers: [{ name: 'everything', url: everything.url }] },
    {} as ProviderContext,
  );
  t.teardown(() => p.close());
  const names = (await p.list()).map((x) => x.name);
  t.ok(names.includes('everything__echo'), 'tools are discovered with the SDK and qualified by server');
  t.equal((await p.search('echo', 3))[0]?.tool.name, 'everything__echo', 'search ranks the name match first');
  t.match(
    await p.get('everything__echo'),
    { input_schema: { properties: { message: { type: 'string' } } } },
    'with the real input schema',
  );
  t.same(
    (await p.listServers()).map((s) => [s.name, s.health]),
    [['everything', 'healthy']],
  );
});
