import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { tempDir } from '../helpers/app.ts';
import { apiKeyUsers, keyHeader, keyOf } from '../fixtures/api-key-users.ts';
import { agentApp, listen, llmRequests } from '../agents/helpers.ts';

const run = promisify(execFile);
const call = (id: string, name: string, input: Record<string, unknown>) => ({ id, name, input });

t.test(
  'export: standalone script with sub-agents, errors as text, and a refreshed token from a token endpoint',
  async (t) => {
    const steps = [
      { tool_calls: [call('e1', 'call_helper', { message: 'check' }), call('e2', 'bogus', {})] },
      { content: 'checked' },
      { content: 'All good.' },
    ];
    const app = await agentApp(t, { steps, config: apiKeyUsers({ exporter: {} }) });
    const owner = keyHeader('exporter');
    await app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: owner,
      payload: { name: 'helper', model: 'm', hooks: { auto_memory: false } },
    });
    const made = await app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: owner,
      payload: {
        name: 'exp',
        model: 'm',
        hooks: { auto_memory: false },
        primitives: { agents: { enabled: true, tools: ['helper'] } },
      },
    });
    t.equal(made.statusCode, 201, made.body);
    const server = (
      await app.inject({
        method: 'POST',
        url: '/api/v1/agents/exp/chat',
        headers: owner,
        payload: { message: 'Check it' },
      })
    ).json();
    t.equal(server.response, 'All good.');

    // A token endpoint issuing short-lived tokens: the script must come back for a new one.
    let issued = 0;
    const tokens = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') !== 'client_credentials' || form.get('client_secret') !== 's3cret') {
          res.writeHead(401).end();
          return;
        }
        issued++;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: keyOf('exporter'), expires_in: 30, token_type: 'Bearer' }));
      });
    });
    await new Promise<void>((r) => tokens.listen(0, '127.0.0.1', r));
    t.teardown(() => tokens.close());
    const tokenUrl = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}/token`;

    const base = await listen(t, app);
    const res = await fetch(`${base}/api/v1/agents/exp/export`, { headers: owner });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'text/x-python; charset=utf-8');
    t.equal(res.headers.get('content-disposition'), 'attachment; filename="exp.py"');
    const script = await res.text();
    t.notOk(script.includes(keyOf('exporter')), 'no credential is baked into the script');
    const file = join(tempDir('sb-export-'), 'exp.py');
    writeFileSync(file, script);
    const env = {
      PATH: process.env.PATH,
      SWITCHBOARD_URL: base,
      SWITCHBOARD_TOKEN_URL: tokenUrl,
      SWITCHBOARD_CLIENT_ID: 'cli',
      SWITCHBOARD_CLIENT_SECRET: 's3cret',
    };
    const out = await run('python3', ['-I', file, '--json', 'Check it'], { env, timeout: 30_000 });
    const result = JSON.parse(out.stdout) as { response: string; tools_called: string[]; turns_used: number };
    t.equal(result.response, server.response, 'same answer as the server-side chat');
    t.same(result.tools_called, ['call_helper', 'bogus']);
    t.same(
      llmRequests(app)[5]!.messages.at(-1),
      llmRequests(app)[2]!.messages.at(-1),
      'same tool results, the sub-agent answer and the unknown-tool error, went back to the model',
    );
    t.ok(issued >= 2, `tokens are refreshed before they expire (issued ${issued})`);

    const denied = await run('python3', ['-I', file, 'hi'], {
      env: { ...env, SWITCHBOARD_CLIENT_SECRET: 'wrong' },
      timeout: 30_000,
    }).then(
      () => 'ran',
      (e: { code?: number; stderr?: string }) => e.stderr ?? '',
    );
    t.match(denied, /HTTP Error 401|401/, 'a refused token request stops the script with the status');
  },
);

t.test('export: code-interpreter sessions open on first use and close when the script exits', async (t) => {
  const { fileURLToPath } = await import('node:url');
  const echoCi = fileURLToPath(new URL('../agents/fixtures/echo-ci', import.meta.url));
  const app = await agentApp(t, {
    script: [
      {
        match: 'run code',
        turns: [
          { tool_calls: [{ name: 'execute_code', input: { code: 'hello', language: 'echo' } }] },
          { tool_calls: [{ name: 'execute_code', input: { code: 'again' } }] },
          { content: 'Output: {{tool_result}}' },
        ],
      },
    ],
    config: {
      provider_packages: [echoCi],
      providers: { code_interpreter: { default: 'echo', instances: { echo: { type: 'test_echo' } } } },
    },
  });
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: {
      name: 'coder',
      model: 'm',
      hooks: { auto_memory: false },
      primitives: { code_interpreter: { enabled: true } },
    },
  });
  const server = (
    await app.inject({ method: 'POST', url: '/api/v1/agents/coder/chat', payload: { message: 'run code' } })
  ).json();
  t.match(server.response, /^Output: \{"session_id":"ci-1","stdout":"again"/);
  const ci = app.sb.providers.get('code_interpreter', 'echo') as unknown as { log: string[] };
  t.same(ci.log, ['open ci-1', 'exec ci-1', 'exec ci-1', 'close ci-1']);

  const base = await listen(t, app);
  const file = join(tempDir('sb-export-'), 'coder.py');
  writeFileSync(file, await (await fetch(`${base}/api/v1/agents/coder/export`)).text());
  const out = await run('python3', ['-I', file, '--json', 'run code'], {
    env: { PATH: process.env.PATH, SWITCHBOARD_URL: base },
    timeout: 30_000,
  });
  const result = JSON.parse(out.stdout) as { response: string };
  t.equal(result.response.replace('ci-2', 'ci-1'), server.response, 'same answer (in its own session)');
  t.same(
    ci.log.slice(4),
    ['open ci-2', 'exec ci-2', 'exec ci-2', 'close ci-2'],
    'the script opened one session lazily and closed it at exit',
  );
});
