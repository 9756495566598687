import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { startEverything } from '../mcp/servers.ts';
import { adminBasic, startCluster } from './cluster.ts';

/**
 * A streamable-HTTP MCP session through nginx with the official SDK client:
 * initialize, tools/list and 20 tools/call, while nginx hands the requests of
 * the one session to both replicas in turn. The gateway keeps no per-session
 * state for streamable HTTP (the backend's Mcp-Session-Id travels with every
 * request), so any replica can carry any request. Each replica's /metrics shows
 * that both took part.
 */

t.setTimeout(900_000);

const gatewayRequests = async (base: string) => {
  const text = await (await fetch(`${base}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('switchboard_http_requests_total{') && line.includes('/mcp"'))
      n += Number(line.split(' ').at(-1));
  return n;
};

t.test('an MCP session through nginx keeps working while its requests alternate replicas', async (t) => {
  const backend = await startEverything('streamableHttp');
  t.teardown(() => backend.stop());
  const c = await startCluster(t);
  const reg = await fetch(`${c.base}/api/servers/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...adminBasic },
    body: JSON.stringify({
      server_name: 'Everything',
      description: 'reference MCP server',
      path: '/everything',
      proxy_pass_url: backend.url,
    }),
  });
  t.equal(reg.status, 201, 'registered through nginx');
  const minted = await fetch(`${c.base}/api/tokens/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...adminBasic },
    body: JSON.stringify({ requested_scopes: ['mcp-registry-admin'] }),
  });
  t.equal(minted.status, 200, 'token minted through nginx');
  const token = ((await minted.json()) as { access_token: string }).access_token;

  const before = await Promise.all(c.replicas.map((r) => gatewayRequests(r.base)));
  const client = new Client({ name: 'cluster-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${c.base}/everything/mcp`), {
      requestInit: { headers: { 'x-authorization': `Bearer ${token}` } },
    }),
  );
  t.teardown(() => client.close());
  const tools = await client.listTools();
  t.ok(
    tools.tools.some((x) => x.name === 'echo'),
    `tools/list: ${tools.tools.length} tools`,
  );
  const answers: string[] = [];
  for (let i = 0; i < 20; i++) {
    const res = (await client.callTool({ name: 'echo', arguments: { message: `m${i}` } })) as {
      content: Array<{ type: string; text?: string }>;
    };
    answers.push(res.content[0]?.text ?? '');
  }
  t.same(answers.filter((a, i) => a.includes(`m${i}`)).length, 20, '20 tools/call answered, each with its own message');
  const after = await Promise.all(c.replicas.map((r) => gatewayRequests(r.base)));
  const served = after.map((n, i) => n - before[i]!);
  t.comment(`gateway requests per replica during the session: ${served.join(', ')}`);
  t.ok(
    served.every((n) => n >= 5),
    `both replicas carried requests of the session (${served.join(', ')})`,
  );
});
