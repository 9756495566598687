import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import t from 'tap';
import { mintSelfToken } from '../../plugins/registry/auth/self-tokens.ts';
import { tempDir } from '../helpers/app.ts';
import { startEverything } from '../mcp/servers.ts';
import { adminBasic, startCluster } from './cluster.ts';

/**
 * A legacy SSE MCP session through nginx with the official SDK's
 * SSEClientTransport: the GET /sse stream stays on the replica that opened
 * it, while nginx hands the session's POST /messages to both replicas in
 * turn; those reaching the other replica are relayed over Redis pub/sub to the
 * stream's replica. Initialize, tools/list and 20 tools/call complete, each
 * replica's /metrics shows that both took messages, and a caller whose scope
 * allows only `echo` gets a filtered tools/list (the filter runs on the stream's
 * replica, which must learn the list request's id from a relayed post) and a
 * refused call.
 */

t.setTimeout(900_000);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SECRET = 'sse-relay-cluster-test-secret-key';

const messageRequests = async (base: string) => {
  const text = await (await fetch(`${base}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('switchboard_http_requests_total{') && line.includes('/messages"'))
      n += Number(line.split(' ').at(-1));
  return n;
};

async function sseClient(t: { teardown(fn: () => unknown): void }, url: string, token: string) {
  const headers = { 'x-authorization': `Bearer ${token}` };
  const client = new Client({ name: 'cluster-sse-test', version: '1.0.0' });
  await client.connect(
    new SSEClientTransport(new URL(url), {
      requestInit: { headers },
      eventSourceInit: {
        fetch: (u, init) =>
          fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
      },
    }),
  );
  t.teardown(() => client.close());
  return client;
}

t.test('a legacy SSE session through nginx: messages on the other replica are relayed to the stream', async (t) => {
  const backend = await startEverything('sse');
  t.teardown(() => backend.stop());
  // The shipped scopes plus one that allows only `echo` on /everything.
  const scopesDir = join(tempDir('sb-sse-scopes-'), 'scopes');
  mkdirSync(scopesDir);
  cpSync(join(ROOT, 'scopes'), scopesDir, { recursive: true });
  writeFileSync(
    join(scopesDir, 'sse-echo.json'),
    JSON.stringify({
      _id: 'sse-echo',
      group_mappings: [],
      server_access: [
        {
          server: 'everything',
          methods: ['initialize', 'notifications/initialized', 'tools/list', 'tools/call'],
          tools: ['echo'],
        },
      ],
      ui_permissions: {},
    }),
  );
  const c = await startCluster(t, { config: { registry: { scopes_dir: scopesDir } }, env: { SECRET_KEY: SECRET } });
  const reg = await fetch(`${c.base}/api/servers/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...adminBasic },
    body: JSON.stringify({
      server_name: 'Everything',
      description: 'reference MCP server over SSE',
      path: '/everything',
      proxy_pass_url: backend.url.replace(/\/sse$/, ''),
      supported_transports: ['sse'],
    }),
  });
  t.equal(reg.status, 201, 'registered through nginx');
  const key = new TextEncoder().encode(SECRET);
  const mint = (username: string, scopes: string[]) =>
    mintSelfToken(key, { username, groups: [], scopes, expiresInSeconds: 3600 });

  const before = await Promise.all(c.replicas.map((r) => messageRequests(r.base)));
  const client = await sseClient(t, `${c.base}/everything/sse`, await mint('alice', ['mcp-registry-admin']));
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
  t.equal(
    answers.filter((a, i) => a.includes(`m${i}`)).length,
    20,
    '20 tools/call answered, each with its own message',
  );
  const after = await Promise.all(c.replicas.map((r) => messageRequests(r.base)));
  const served = after.map((n, i) => n - before[i]!);
  t.comment(`SSE messages per replica during the session: ${served.join(', ')}`);
  t.ok(
    served.every((n) => n >= 5),
    `both replicas took messages of the one session (${served.join(', ')})`,
  );

  const limited = await sseClient(t, `${c.base}/everything/sse`, await mint('bob', ['sse-echo']));
  for (let i = 0; i < 4; i++) {
    // Several lists: with round robin some of them are relayed, and each must come back filtered.
    t.same(
      (await limited.listTools()).tools.map((x) => x.name),
      ['echo'],
      `tools/list ${i + 1} lists only the tool the caller may call`,
    );
  }
  await t.rejects(
    limited.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }),
    /SB_ERR_GATEWAY_DENIED|403/,
    'a tool outside the scope is refused',
  );

  // Deterministic: a stream opened on replica 0, its messages posted to replica 1.
  const daveToken = await mint('dave', ['mcp-registry-admin']);
  const stream = new AbortController();
  t.teardown(() => stream.abort());
  const opened = await fetch(`${c.replicas[0]!.base}/everything/sse`, {
    headers: { 'x-authorization': `Bearer ${daveToken}`, accept: 'text/event-stream' },
    signal: stream.signal,
  });
  t.equal(opened.status, 200, 'a raw SSE stream on replica 0');
  const reader = opened.body!.getReader();
  let text = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    text += new TextDecoder().decode(r.value, { stream: true }).replace(/\r\n/g, '\n');
    if (/event: endpoint\ndata: (\S+)/.test(text)) break;
  }
  const endpoint = /event: endpoint\ndata: (\S+)/.exec(text)?.[1] ?? '(no endpoint event)';
  const postOn1 = (token: string, body: unknown) =>
    fetch(`${c.replicas[1]!.base}${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-authorization': `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const foreign = await postOn1(await mint('carol', ['mcp-registry-admin']), init);
  t.equal(foreign.status, 403, "another caller's post relayed to the stream's replica is refused there");
  t.equal(((await foreign.json()) as { code: string }).code, 'SB_ERR_GATEWAY_SESSION_OWNER');
  const own = await postOn1(daveToken, init);
  t.equal(own.status, 202, "the owner's post on replica 1 reaches the backend through replica 0");
  while (!/"serverInfo"/.test(text)) {
    const r = await reader.read();
    if (r.done) break;
    text += new TextDecoder().decode(r.value);
  }
  t.match(text, /"serverInfo"/, 'and its answer arrives on the stream held by replica 0');
  stream.abort();

  const stranger = await fetch(`${c.base}/everything/messages?sessionId=00000000-0000-4000-8000-000000000000`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-authorization': `Bearer ${await mint('carol', ['mcp-registry-admin'])}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.equal(stranger.status, 404, 'a session no replica holds is 404');
  t.equal(((await stranger.json()) as { code: string }).code, 'SB_ERR_GATEWAY_SESSION');
});
