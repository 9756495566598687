import type { Tool, ToolCaller, ToolsProvider } from '../../core/primitives/tools.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

export const TOOLS_CASES = {
  registerGet: 'register then get a tool',
  list: 'list returns every registered tool',
  search: 'search ranks matching tools and honours max_results',
  remove: 'delete removes a tool and reports unknown names',
  invoke: 'invoke runs a tool and returns {tool_name, result, status}',
  invokeFailure: 'a failing tool rejects',
  invokeUnknown: 'invoking an unknown tool rejects with 404',
  invokeDenied: "a tool outside the caller's access rejects with 403",
  servers: 'register, list and get an MCP server',
  unsupported: 'capabilities declared false reject with 501',
} as const;

export interface ToolsSuiteOptions extends SuiteOptions<ToolsProvider> {
  /**
   * What this provider can actually run, since that depends on its backend:
   * a tool to register, params for it, and a check of the result.
   */
  invocable?: {
    tool: Tool;
    params: Record<string, unknown>;
    check: (t: Runner, result: unknown) => void;
    failing?: { tool: Tool; params: Record<string, unknown> };
    /** The tools come from the provider's backend (MCP servers), so the suite does not register them. */
    backed?: boolean;
  };
  /** Who calls, for providers whose backend applies its own access rules (the registry). */
  caller?: ToolCaller;
  /** A tool the backend has but the caller's access does not grant: invoking it must reject with 403. */
  deniedTool?: { name: string; params: Record<string, unknown> };
  /** The URL of an MCP server the provider can reach, for the servers case. */
  serverUrl?: string;
}

const weather: Tool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const stocks: Tool = {
  name: 'stock_quote',
  description: 'Latest price of a stock ticker',
  input_schema: { type: 'object' },
};
const forecast: Tool = {
  name: 'forecast',
  description: 'Weather forecast for the next days',
  input_schema: { type: 'object' },
};

/** The tools suite: every tools provider runs it with its own runner and named skips. */
export async function toolsSuite(t: Runner, opts: ToolsSuiteOptions): Promise<void> {
  const run = caseRunner(t, opts);

  await run(TOOLS_CASES.registerGet, async (t, p) => {
    t.same(await p.register(weather), weather, 'register echoes the tool');
    t.same(await p.get('get_weather'), weather);
    t.equal(await p.get('missing'), undefined, 'unknown name is undefined');
  });

  await run(TOOLS_CASES.list, async (t, p) => {
    for (const tool of [weather, stocks, forecast]) await p.register(tool);
    t.same((await p.list()).map((x) => x.name).sort(), ['forecast', 'get_weather', 'stock_quote']);
  });

  await run(TOOLS_CASES.search, async (t, p) => {
    for (const tool of [weather, stocks, forecast]) await p.register(tool);
    const hits = await p.search('weather', 10);
    t.same(hits.map((h) => h.tool.name).sort(), ['forecast', 'get_weather'], 'only matching tools');
    t.equal(hits[0].tool.name, 'get_weather', 'a name match ranks first');
    t.ok(
      hits.every((h, i) => i === 0 || hits[i - 1].score >= h.score),
      'ordered by score',
    );
    t.equal((await p.search('weather', 1)).length, 1, 'max_results caps the list');
    t.same(await p.search('zebra', 10), [], 'no match, no results');
  });

  await run(TOOLS_CASES.remove, async (t, p) => {
    await p.register(weather);
    t.equal(await p.delete('get_weather'), true);
    t.equal(await p.get('get_weather'), undefined);
    t.equal(await p.delete('get_weather'), false, 'deleting again reports false');
  });

  await run(TOOLS_CASES.invoke, async (t, p) => {
    if (!opts.invocable) return void t.ok(false, 'the invoke case needs `invocable`: pass it or skip the case by name');
    if (!opts.invocable.backed) await p.register(opts.invocable.tool);
    t.equal(
      (await p.get(opts.invocable.tool.name, opts.caller))?.name,
      opts.invocable.tool.name,
      'the tool is found by its name',
    );
    const out = await p.invoke(opts.invocable.tool.name, opts.invocable.params, opts.caller);
    t.equal(out.tool_name, opts.invocable.tool.name);
    t.equal(out.status, 'success');
    opts.invocable.check(t, out.result);
  });

  await run(TOOLS_CASES.invokeFailure, async (t, p) => {
    const failing = opts.invocable?.failing;
    if (!failing)
      return void t.ok(false, 'the failure case needs `invocable.failing`: pass it or skip the case by name');
    if (!opts.invocable?.backed) await p.register(failing.tool);
    await t.rejects(p.invoke(failing.tool.name, failing.params, opts.caller));
  });

  await run(TOOLS_CASES.invokeUnknown, async (t, p) => {
    await t.rejects(p.invoke('nosuchserver__nosuchtool', {}, opts.caller), { statusCode: 404 });
  });

  await run(TOOLS_CASES.invokeDenied, async (t, p) => {
    if (!opts.deniedTool)
      return void t.ok(false, 'the denied case needs `deniedTool`: pass it or skip the case by name');
    await t.rejects(p.invoke(opts.deniedTool.name, opts.deniedTool.params, opts.caller), { statusCode: 403 });
  });

  await run(TOOLS_CASES.servers, async (t, p) => {
    const url = opts.serverUrl ?? 'http://127.0.0.1:9/mcp';
    const s = await p.registerServer({ name: 'conf-server', url, config: { timeout: 5 } }, opts.caller);
    t.match(s, { name: 'conf-server', url, config: { timeout: 5 } });
    t.ok(['healthy', 'unhealthy', 'unknown'].includes(s.health), 'health is one of the known states');
    // A backed provider may hold other servers already (its configured ones).
    t.ok(
      (await p.listServers(opts.caller)).some((x) => x.name === 'conf-server'),
      'the server is listed',
    );
    t.equal((await p.getServer('conf-server', opts.caller))?.url, url);
    t.equal(await p.getServer('nope', opts.caller), undefined);
  });

  await run(TOOLS_CASES.unsupported, async (t, p) => {
    const gated: Array<[string, () => Promise<unknown>]> = [
      ['invoke', () => p.invoke('get_weather', { city: 'Oslo' })],
      ['servers', () => p.listServers()],
      ['servers', () => p.registerServer({ name: 'x', url: 'http://127.0.0.1:9/' })],
      ['register', () => p.register(weather)],
      ['search', () => p.search('weather', 5)],
    ];
    let checked = 0;
    for (const [cap, call] of gated) {
      if (p.capabilities[cap] === true) continue;
      checked++;
      await t.rejects(call(), { statusCode: 501 }, `capability '${cap}' is false, so the call is a 501`);
    }
    t.comment(`${checked} unsupported operations checked`);
  });
}
