import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { tempDir } from '../helpers/app.ts';
import { registerServer } from '../helpers/registry-servers.ts';
import { asUser, withScope } from '../helpers/registry-auth.ts';
import { agentApp, listen } from '../agents/helpers.ts';
import { startEverything } from '../mcp/servers.ts';

const run = promisify(execFile);

/**
 * An agent whose `primitives.tools.servers` names a registered MCP server gets
 * its tools as model tools with their real schemas, called through the
 * registry gateway; the exported script calls them through /api/v1/tools.
 */
t.test('an agent calls everything__get-sum through the registry, server-side and from its Python export', async (t) => {
  const everything = await startEverything('streamableHttp');
  t.teardown(() => everything.stop());
  const app = await agentApp(t, {
    script: [
      {
        match: 'add',
        turns: [
          { tool_calls: [{ name: 'everything__get-sum', input: { a: 19, b: 23 } }] },
          { content: 'The sum: {{tool_result}}' },
        ],
      },
    ],
    config: {
      registry: { health: { interval_seconds: 0, timeout_seconds: 5 } },
      // noop auth's principal `noop` is mapped by the admin to one scope on the everything server.
      providers: {
        tools: {
          instances: { registry: { type: 'registry', options: { principal_scopes: { noop: ['agent-everything'] } } } },
        },
      },
    },
  });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  await registerServer(t, app, admin, { name: 'Everything', path: '/everything', proxy_pass_url: everything.url });
  await app.inject({ method: 'POST', url: '/api/servers/everything/refresh', headers: admin });
  const methods = ['initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'ping'];
  await withScope(app, {
    _id: 'agent-everything',
    server_access: [{ server: 'everything', methods, tools: ['get-sum', 'echo'] }],
  });

  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: {
      name: 'adder',
      model: 'm',
      hooks: { auto_memory: false },
      primitives: { tools: { enabled: true, servers: ['everything'] } },
    },
  });
  t.equal(created.statusCode, 201, created.body);

  const listed = await app.inject({ method: 'GET', url: '/api/v1/agents/adder/tools' });
  t.equal(listed.statusCode, 200, listed.body);
  const sum = listed.json().tools.find((x: { name: string }) => x.name === 'everything__get-sum');
  t.match(sum, { primitive: 'tools', provider: 'registry' }, "the server's tools are the agent's tools");

  const chat = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/adder/chat',
    payload: { message: 'add 19 and 23' },
  });
  t.equal(chat.statusCode, 200, chat.body);
  t.match(chat.json().response, /42/, 'the agent answers with the sum the MCP server computed');
  t.same(chat.json().tools_called, ['everything__get-sum']);

  const base = await listen(t, app);
  const res = await fetch(`${base}/api/v1/agents/adder/export`);
  t.equal(res.status, 200);
  const script = await res.text();
  t.match(script, 'everything__get-sum', 'the export offers the MCP tool to the model');
  const file = join(tempDir('sb-export-'), 'adder.py');
  writeFileSync(file, script);
  const out = await run('python3', ['-I', file, '--json', 'add 19 and 23'], {
    env: { PATH: process.env.PATH, SWITCHBOARD_URL: base },
    timeout: 60_000,
  });
  const result = JSON.parse(out.stdout) as { response: string; tools_called: string[] };
  t.match(result.response, /42/, 'the exported script gets the same sum through the gateway');
  t.same(result.tools_called, ['everything__get-sum']);
});
