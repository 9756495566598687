import { createServer } from 'node:http';
import t, { type Test } from 'tap';
import { makeApp } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';
import { listenOnLoopback } from '../helpers/registry-servers.ts';
import { startOpenAiWire } from '../wire/openai-server.ts';
import type { WireServer } from '../wire/common.ts';

t.setTimeout(900_000);

/** What the fake model answers: an unsafe verdict with one high finding. */
const UNSAFE =
  '{"verdict": "unsafe", "findings": [{"location": "tools/add", "severity": "high", "threat": "data_exfiltration", "reason": "asks for secrets"}]}';

const VARS = [
  'MCP_SCANNER_LLM_API_KEY',
  'SKILL_SECURITY_LLM_API_KEY',
  'SECURITY_ANALYZERS',
  'AGENT_SECURITY_ANALYZERS',
  'SKILL_SECURITY_ANALYZERS',
  'OPENAI_BASE_URL',
  'OPENAI_API_KEY',
  'SECURITY_ON_SCAN_FAILURE',
];

/** Sets the spec's variables for one test and puts the old values back after it. */
function withEnv(t: Test, vars: Record<string, string>): void {
  const saved = Object.fromEntries(VARS.map((k) => [k, process.env[k]]));
  for (const k of VARS) delete process.env[k];
  Object.assign(process.env, vars);
  t.teardown(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

async function wire(t: Test): Promise<WireServer> {
  const w = await startOpenAiWire();
  t.teardown(() => w.stop());
  return w;
}

const registerServer = (app: Awaited<ReturnType<typeof makeApp>>, headers: Record<string, string>, path: string) =>
  app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers,
    payload: {
      name: path,
      description: 'd',
      path,
      proxy_pass_url: `http://127.0.0.1:9${path}`,
      tool_list_json: [{ name: 'add', description: 'Adds two numbers', inputSchema: { type: 'object' } }],
    },
  });

t.test('MCP_SCANNER_LLM_API_KEY: the llm analyzer judges servers with that key and blocks an unsafe one', async (t) => {
  const w = await wire(t);
  w.enqueue({ kind: 'text', text: UNSAFE });
  withEnv(t, {
    MCP_SCANNER_LLM_API_KEY: 'sk-test',
    SECURITY_ANALYZERS: 'yara,llm',
    OPENAI_BASE_URL: `${w.url}/v1`,
  });
  const app = await makeApp(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const res = await registerServer(app, admin, '/calc');
  t.equal(res.statusCode, 201, res.body);
  t.match(res.json(), {
    is_enabled: false,
    tags: ['security-pending'],
    security_scan: { status: 'UNSAFE', analyzers_used: ['yara', 'llm'], blocked: true },
  });
  t.notMatch(res.body, /sk-test/);
  const chats = w.requests.filter((r) => r.path.endsWith('/chat/completions'));
  t.equal(chats.length, 1, 'the judge was asked once');
  t.equal(chats[0].headers.authorization, 'Bearer sk-test');
  t.equal(chats[0].body.model, 'gpt-4o-mini', 'the documented default model');
  t.match(JSON.stringify(chats[0].body.messages), /Adds two numbers/);

  const report = await app.inject({ url: '/api/servers/calc/security-scan', headers: admin });
  t.equal(report.statusCode, 200, report.body);
  t.match(report.body, /data_exfiltration/, 'the llm finding is in the stored report');
  t.notMatch(report.body, /sk-test/);
  for (const url of ['/api/v1/providers/status', '/api/v1/providers']) {
    const res = await app.inject({ url, headers: admin });
    t.equal(res.statusCode, 200, url);
    t.notMatch(res.body, /sk-test/, url);
  }
});

t.test('SKILL_SECURITY_LLM_API_KEY: skills use their own key, not the server key', async (t) => {
  const w = await wire(t);
  w.enqueue({ kind: 'text', text: UNSAFE });
  withEnv(t, {
    MCP_SCANNER_LLM_API_KEY: 'sk-server',
    SKILL_SECURITY_LLM_API_KEY: 'sk-skill',
    SKILL_SECURITY_ANALYZERS: 'static,llm',
    OPENAI_BASE_URL: `${w.url}/v1`,
  });
  const md = '---\nname: notes\ndescription: Takes notes\n---\nWrite down what the user says.\n';
  const files = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/markdown' }).end(md));
  const base = await listenOnLoopback(t, files);
  const app = await makeApp(t, { registry: { allow_private_skill_urls: true } });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const res = await app.inject({
    method: 'POST',
    url: '/api/skills',
    headers: admin,
    payload: { name: 'notes', description: 'd', skill_md_url: `${base}/notes.md` },
  });
  t.equal(res.statusCode, 201, res.body);
  t.match(res.json(), { is_enabled: false, security_scan: { status: 'UNSAFE' } });
  t.notMatch(res.body, /sk-skill|sk-server/);
  const chats = w.requests.filter((r) => r.path.endsWith('/chat/completions'));
  t.equal(chats.length, 1);
  t.equal(chats[0].headers.authorization, 'Bearer sk-skill');
  const report = await app.inject({ url: '/api/skills/notes/security-scan', headers: admin });
  t.match(report.json(), { analyzers_used: ['static', 'llm'], is_safe: false });
  t.notMatch(report.body, /sk-skill/);
});

t.test('llm named but no key and no instance: the scan fails naming the variable (on_scan_failure)', async (t) => {
  withEnv(t, { SECURITY_ANALYZERS: 'yara,llm' });
  const app = await makeApp(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const res = await registerServer(app, admin, '/calc');
  t.equal(res.statusCode, 201, res.body);
  t.match(res.json(), {
    is_enabled: false,
    tags: ['security-pending'],
    security_scan: { status: 'SCAN_FAILED', scan_failed: true },
  });
  t.match(res.json().security_scan.errors, [/set MCP_SCANNER_LLM_API_KEY/]);

  withEnv(t, { SECURITY_ANALYZERS: 'yara,llm', SECURITY_ON_SCAN_FAILURE: 'block' });
  const strict = await makeApp(t);
  const refused = await registerServer(strict, await asUser(strict, ['mcp-registry-admin'], 'alice'), '/calc');
  t.equal(refused.statusCode, 503, refused.body);
  t.match(refused.json(), { code: 'SB_ERR_SCAN_FAILED', detail: /MCP_SCANNER_LLM_API_KEY/ });
});

t.test('a wrong key: the failed scan says why without echoing the key', async (t) => {
  const w = await wire(t);
  w.enqueue({ kind: 'status', status: 401, message: 'Incorrect API key provided: sk-wrong-123' });
  withEnv(t, { MCP_SCANNER_LLM_API_KEY: 'sk-wrong-123', SECURITY_ANALYZERS: 'llm', OPENAI_BASE_URL: `${w.url}/v1` });
  const app = await makeApp(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const res = await registerServer(app, admin, '/calc');
  t.equal(res.statusCode, 201, res.body);
  t.match(res.json(), { security_scan: { status: 'SCAN_FAILED' } });
  t.notMatch(res.body, /sk-wrong-123/);
  const report = await app.inject({ url: '/api/servers/calc/security-scan', headers: admin });
  t.notMatch(report.body, /sk-wrong-123/);
});
