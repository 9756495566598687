import t from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import type { ToolsProvider } from '../../core/primitives/tools.ts';
import { firstFactory, writeProviderPackage } from '../fixtures/provider-package.ts';
import { makeApp } from '../helpers/app.ts';
import type { Runner } from '../conformance/kit.ts';
import { TOOLS_CASES, toolsSuite } from '../conformance/tools.ts';

/**
 * A throwaway tools provider package that can run tools in-process: `echo`
 * returns its params, `fail` throws. It stands in for a registry-style backend
 * so the invoke (200/502) and server routes are exercised end to end.
 */
function echoToolsPackage(): string {
  return writeProviderPackage({
    name: 'fixture-echo-tools',
    provides: ['tools'],
    source: `export const providers = [{
  type: 'echo', kind: 'tools',
  create: (name) => {
    const tools = new Map(); const servers = new Map();
    return {
      name, type: 'echo', kind: 'tools', capabilities: { register: true, search: true, invoke: true, servers: true },
      register: async (tool) => (tools.set(tool.name, tool), tool),
      list: async () => [...tools.values()],
      get: async (n) => tools.get(n),
      search: async (q, max) => [...tools.values()].filter((x) => (x.name + ' ' + x.description).toLowerCase().includes(q))
        .map((tool) => ({ tool, score: tool.name.includes(q) ? 1 : 0.5 })).sort((a, b) => b.score - a.score).slice(0, max),
      delete: async (n) => tools.delete(n),
      invoke: async (n, params) => { if (n === 'fail') throw new Error('the backend exploded'); return { tool_name: n, result: { echoed: params }, status: 'success' }; },
      listServers: async () => [...servers.values()],
      registerServer: async (req) => { const s = { name: req.name, url: req.url, config: req.config ?? {}, health: 'unknown' }; servers.set(s.name, s); return s; },
      getServer: async (n) => servers.get(n),
      healthcheck: async () => 'ok', close: async () => {},
    };
  },
}];\n`,
  });
}

const weather = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
    required: ['city'],
    additionalProperties: false,
  },
};

t.test('noop mode: catalogue with data, invoke and servers 501', async (t) => {
  // Platform alone: with the registry surface in the process the `registry` provider is the default (tools-registry.test.ts).
  const app = await makeApp(t, {}, { surfaces: ['platform'] });
  const created = await app.inject({ method: 'POST', url: '/api/v1/tools', payload: weather });
  t.equal(created.statusCode, 201);
  t.same(created.json(), weather);
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/tools', payload: weather })).statusCode,
    409,
    'duplicate name',
  );
  await app.inject({
    method: 'POST',
    url: '/api/v1/tools',
    payload: { name: 'stock_quote', description: 'Stock prices' },
  });

  const list = await app.inject({ method: 'GET', url: '/api/v1/tools' });
  t.equal(list.statusCode, 200);
  t.match(list.json(), {
    total: 2,
    tools: [
      { name: 'get_weather' },
      { name: 'stock_quote', description: 'Stock prices', input_schema: { type: 'object' } },
    ],
  });

  const search = await app.inject({ method: 'GET', url: '/api/v1/tools/search?query=weather' });
  t.equal(search.statusCode, 200);
  t.match(search.json(), { query: 'weather', matches: [{ tool: { name: 'get_weather' } }] });
  t.equal(search.json().matches.length, 1);

  t.same((await app.inject({ method: 'GET', url: '/api/v1/tools/get_weather' })).json(), weather);
  const missing = await app.inject({ method: 'GET', url: '/api/v1/tools/nope' });
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().code, 'SB_ERR_TOOLS_NOT_FOUND');

  const invoke = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/get_weather/invoke',
    payload: { params: { city: 'Oslo' } },
  });
  t.equal(invoke.statusCode, 501);
  t.match(invoke.json(), {
    code: 'SB_ERR_CAPABILITY_MISSING',
    detail: /tools provider 'noop' does not support invoking tools \(capability 'invoke'\).*X-Provider-Tools/,
  });

  for (const [method, url, payload] of [
    ['GET', '/api/v1/tools/servers', undefined],
    ['POST', '/api/v1/tools/servers', { name: 'docs', url: 'http://127.0.0.1:9/mcp' }],
    ['GET', '/api/v1/tools/servers/docs', undefined],
  ] as const) {
    const res = await app.inject({ method, url, payload });
    t.equal(res.statusCode, 501, `${method} ${url} is 501 on noop`);
    t.match(res.json().detail, /MCP server management \(capability 'servers'\)/);
  }

  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/tools/get_weather' })).statusCode, 204);
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/api/v1/tools/get_weather' })).statusCode,
    404,
    'deleting twice is 404',
  );
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/tools/get_weather' })).statusCode, 404);
});

t.test('bad input: search query, max_results, tool body, params', async (t) => {
  const app = await makeApp(t, {}, { surfaces: ['platform'] });
  await app.inject({ method: 'POST', url: '/api/v1/tools', payload: weather });
  const noQuery = await app.inject({ method: 'GET', url: '/api/v1/tools/search' });
  t.equal(noQuery.statusCode, 422);
  t.match(noQuery.json().detail, [{ loc: ['query', 'query'] }]);
  for (const n of ['0', '101', 'many']) {
    const res = await app.inject({ method: 'GET', url: `/api/v1/tools/search?query=w&max_results=${n}` });
    t.equal(res.statusCode, 422, `max_results=${n} is refused`);
  }
  const noName = await app.inject({ method: 'POST', url: '/api/v1/tools', payload: { description: 'x' } });
  t.equal(noName.statusCode, 422);
  t.match(noName.json().detail, [{ loc: ['body', 'name'] }]);
  const badSchema = await app.inject({
    method: 'POST',
    url: '/api/v1/tools',
    payload: { name: 'bad', input_schema: { type: 'no-such-type' } },
  });
  t.equal(badSchema.statusCode, 400);
  t.match(badSchema.json(), { code: 'SB_ERR_TOOLS_INVALID_SCHEMA', detail: /input_schema of tool 'bad'/ });

  const badParams = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/get_weather/invoke',
    payload: { params: { days: 0 } },
  });
  t.equal(badParams.statusCode, 400, 'params are checked against input_schema before the capability');
  t.match(badParams.json(), {
    code: 'SB_ERR_TOOLS_INVALID_PARAMS',
    detail: /Invalid parameters for tool 'get_weather':.*city.*\/days must be >= 1/,
  });
  const extra = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/get_weather/invoke',
    payload: { params: { city: 'Oslo', colour: 'red' } },
  });
  t.equal(extra.statusCode, 400);
  t.match(extra.json().detail, /additional properties/);
  const unknown = await app.inject({ method: 'POST', url: '/api/v1/tools/nope/invoke', payload: { params: {} } });
  t.equal(unknown.statusCode, 404);
});

t.test('a provider that can run tools: 200, 502 on failure, server records', async (t) => {
  const app = await makeApp(t, {
    provider_packages: [echoToolsPackage()],
    providers: { tools: { default: 'echo', instances: { echo: { type: 'echo' }, noop: { type: 'noop' } } } },
  });
  await app.inject({ method: 'POST', url: '/api/v1/tools', payload: weather });
  await app.inject({ method: 'POST', url: '/api/v1/tools', payload: { name: 'fail', description: 'always fails' } });

  const ok = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/get_weather/invoke',
    payload: { params: { city: 'Oslo', days: 2 } },
  });
  t.equal(ok.statusCode, 200);
  t.same(ok.json(), { tool_name: 'get_weather', result: { echoed: { city: 'Oslo', days: 2 } }, status: 'success' });

  const failed = await app.inject({ method: 'POST', url: '/api/v1/tools/fail/invoke', payload: {} });
  t.equal(failed.statusCode, 502);
  t.match(failed.json(), { code: 'SB_ERR_TOOLS_EXECUTION_FAILED', detail: "Tool 'fail' failed: the backend exploded" });

  const reg = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/servers',
    payload: { name: 'docs', url: 'http://127.0.0.1:9/mcp', config: { a: 1 } },
  });
  t.equal(reg.statusCode, 201);
  t.same(reg.json(), { name: 'docs', url: 'http://127.0.0.1:9/mcp', config: { a: 1 }, health: 'unknown' });
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/tools/servers',
        payload: { name: 'docs', url: 'http://127.0.0.1:9/mcp' },
      })
    ).statusCode,
    409,
  );
  t.same(
    (await app.inject({ method: 'GET', url: '/api/v1/tools/servers' }))
      .json()
      .servers.map((s: { name: string }) => s.name),
    ['docs'],
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/tools/servers/docs' })).json().url,
    'http://127.0.0.1:9/mcp',
  );
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/tools/servers/nope' })).statusCode, 404);
  const badUrl = await app.inject({
    method: 'POST',
    url: '/api/v1/tools/servers',
    payload: { name: 'x', url: 'not a url' },
  });
  t.equal(badUrl.statusCode, 422);

  // X-Provider-Tools routes one request to the noop instance, whose catalogue is separate.
  const viaNoop = await app.inject({ method: 'GET', url: '/api/v1/tools', headers: { 'x-provider-tools': 'noop' } });
  t.same(viaNoop.json(), { tools: [], total: 0 });
});

t.test('the echo fixture passes the tools suite, invoke cases included', async (t) => {
  const factory = await firstFactory<ToolsProvider>(echoToolsPackage());
  await toolsSuite(t as unknown as Runner, {
    make: async () => factory.create('echo', {}, {} as ProviderContext),
    invocable: {
      tool: { name: 'echo', description: 'echo', input_schema: { type: 'object' } },
      params: { x: 1 },
      check: (t, result) => t.same(result, { echoed: { x: 1 } }),
      failing: { tool: { name: 'fail', description: 'fails', input_schema: { type: 'object' } }, params: {} },
    },
    skip: [
      { reason: 'the fixture declares every capability, so nothing is unsupported', tests: [TOOLS_CASES.unsupported] },
      {
        reason: 'the fixture runs any name and has no access rules',
        tests: [TOOLS_CASES.invokeUnknown, TOOLS_CASES.invokeDenied],
      },
    ],
  });
});
