import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';
import { SECURITY_PENDING } from '../../plugins/registry/catalog/scan.ts';
import { redisReplicas } from '../fixtures/redis-server.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { entities, rankedIds, registerAll, skillHost } from './discovery-fixture.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const search = (app: Awaited<ReturnType<typeof makeApp>>, headers: Record<string, string>, body: object) =>
  app.inject({ method: 'POST', url: '/api/search/semantic', headers, payload: body });

async function setup(t: Parameters<typeof makeApp>[0], config: Record<string, unknown> = {}) {
  const host = await skillHost();
  t.teardown(host.close);
  const app = await makeApp(t, { registry: { allow_private_skill_urls: true, ...config } });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  await registerAll(app, admin, host.url);
  return { app, admin };
}

t.test('request checks: empty query, unknown kind, shape of the answer', async (t) => {
  const { app, admin } = await setup(t);
  const empty = await search(app, admin, { query: '   ' });
  t.equal(empty.statusCode, 400);
  t.match(empty.json(), { code: 'SB_ERR_REGISTRY_EMPTY_QUERY', detail: /must not be empty/ });
  const bad = await search(app, admin, { query: 'x', entity_types: ['planet'] });
  t.equal(bad.statusCode, 422, 'an unknown kind is a validation error naming the field');
  t.match(bad.body, /entity_types/);
  t.equal((await search(app, {}, { query: 'weather' })).statusCode, 401, 'anonymous callers are refused');

  const r = await search(app, admin, { query: 'weather forecast for a city' });
  t.equal(r.statusCode, 200);
  const body = r.json();
  t.match(body, { query: 'weather forecast for a city', search_mode: 'hybrid' });
  t.equal(body.servers[0].path, '/weather');
  t.ok(
    body.servers[0].matching_tools.some((m: { tool_name: string }) => m.tool_name === 'get_forecast'),
    'the server carries its matching tools',
  );
  t.match(body.tools[0], { server_path: '/weather', tool_name: 'get_forecast', server_name: 'OpenWeather' });
  for (const list of [body.servers, body.tools, body.agents, body.skills])
    for (const x of list) t.ok(x.relevance_score >= 0 && x.relevance_score <= 1, 'scores in [0, 1]');
  t.equal(body.total_tools, body.tools.length);

  const onlyAgents = (await search(app, admin, { query: 'plan a trip', entity_types: ['a2a_agent'] })).json();
  t.same([onlyAgents.servers.length, onlyAgents.tools.length, onlyAgents.skills.length], [0, 0, 0]);
  t.equal(onlyAgents.agents[0].path, '/travel-planner');

  const capped = (await search(app, admin, { query: 'list', max_results: 2 })).json();
  t.ok(capped.tools.length <= 2 && capped.servers.length <= 2, 'max_results caps each kind');

  const nothing = (await search(app, admin, { query: 'knit a wool sweater pattern' })).json();
  t.same(rankedIds(nothing), [], 'a query about something absent returns nothing above the floor');
});

t.test('permissions: a user limited to some servers never sees the others or their tools', async (t) => {
  const { app } = await setup(t);
  await withScope(app, {
    _id: 'chat-only',
    server_access: [
      { server: 'slack', methods: ['all'] },
      { server: 'twilio', methods: ['all'] },
    ],
  });
  const limited = await asUser(app, ['chat-only'], 'carol');
  const allowed = new Set(['/slack', '/twilio']);
  for (const query of ['send a message', 'github pull requests', 'weather', 'database tables', 'email']) {
    const body = (await search(app, limited, { query, max_results: 100 })).json();
    for (const s of body.servers) t.ok(allowed.has(s.path), `${query}: server ${s.path} is one carol may list`);
    for (const x of body.tools) t.ok(allowed.has(x.server_path), `${query}: tool of ${x.server_path} is carol's`);
  }
  const msg = (await search(app, limited, { query: 'send a message', max_results: 100 })).json();
  t.ok(
    msg.tools.some((x: { tool_name: string }) => x.tool_name === 'send_sms'),
    'her own servers are found',
  );
  t.notOk(
    msg.tools.some((x: { server_path: string }) => x.server_path === '/gmail'),
    'gmail (send_email) is not hers',
  );
});

t.test('disabled and security-pending items: out unless an admin asks for them', async (t) => {
  const { app, admin } = await setup(t);
  const reader = await asUser(app, ['mcp-registry-user'], 'bob');
  const paths = async (h: Record<string, string>, extra: object = {}) =>
    (await search(app, h, { query: 'stock quote price', max_results: 50, ...extra }))
      .json()
      .servers.map((s: { path: string }) => s.path);
  t.ok((await paths(admin)).includes('/stocks'));
  const off = await app.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: { ...FORM, ...admin },
    payload: new URLSearchParams({ path: '/stocks', new_state: 'false' }).toString(),
  });
  t.equal(off.statusCode, 200);
  t.notOk((await paths(admin)).includes('/stocks'), 'a disabled server is left out');
  t.ok((await paths(admin, { include_disabled: true })).includes('/stocks'), 'an admin may ask for it');
  t.notOk((await paths(reader, { include_disabled: true })).includes('/stocks'), 'a non-admin may not');

  // The scanner's hold: enabled but tagged security-pending.
  const catalog = catalogOf(app);
  await catalog.servers.patch('/currency', (r) => ({ ...r, tags: [...r.tags, SECURITY_PENDING] }));
  const fx = (await search(app, admin, { query: 'convert currency exchange rate' })).json();
  t.notOk(
    [
      ...fx.servers.map((s: { path: string }) => s.path),
      ...fx.tools.map((x: { server_path: string }) => x.server_path),
    ].includes('/currency'),
    'a server held for security review is left out with its tools',
  );
  const agents = catalog.agents.index;
  const card = agents.get('/travel-planner')!;
  await agents.set(card.path, { ...card, tags: [...card.tags, SECURITY_PENDING] });
  const trips = (await search(app, admin, { query: 'plan a trip with flights and hotels' })).json();
  t.notOk(
    trips.agents.some((a: { path: string }) => a.path === '/travel-planner'),
    'an agent held for review too',
  );
});

t.test('the index follows update, delete and toggle', async (t) => {
  const { app, admin } = await setup(t);
  const ids = async (query: string) => rankedIds((await search(app, admin, { query, max_results: 20 })).json());
  t.notOk((await ids('telescope astronomy observations')).includes('mcp_server:/news'));
  const s = entities.servers.find((x) => x.path === '/news')!;
  const put = await app.inject({
    method: 'PUT',
    url: '/api/servers/news',
    headers: { ...FORM, ...admin },
    payload: new URLSearchParams({
      name: 'Sky Watch',
      description: 'Telescope schedules and astronomy observations of the night sky',
      path: '/news',
      proxy_pass_url: 'http://127.0.0.1:9/news',
      tool_list_json: JSON.stringify([{ name: 'plan_observation', description: 'Plan a telescope session' }]),
    }).toString(),
  });
  t.equal(put.statusCode, 200, put.body);
  const after = await ids('telescope astronomy observations');
  t.equal(after[0], 'mcp_server:/news', 'the new text is found');
  t.ok(after.includes('tool:/news#plan_observation'), 'so is the new tool');
  t.notOk((await ids('top headlines')).includes(`tool:/news#${s.tools[0]!.name}`), 'the old tool is gone');

  const del = await app.inject({ method: 'DELETE', url: '/api/servers/news', headers: admin });
  t.equal(del.statusCode, 200, del.body);
  t.notOk(
    (await ids('telescope astronomy observations')).some((id) => id.includes('/news')),
    'a deleted server and its tools are gone',
  );

  const toggle = await app.inject({
    method: 'POST',
    url: '/api/skills/slide-deck/toggle',
    headers: admin,
    payload: { enabled: false },
  });
  t.equal(toggle.statusCode, 200, toggle.body);
  t.notOk((await ids('make a presentation')).includes('skill:/skills/slide-deck'), 'a disabled skill is left out');
  await app.inject({
    method: 'POST',
    url: '/api/skills/slide-deck/toggle',
    headers: admin,
    payload: { enabled: true },
  });
  t.ok((await ids('make a presentation')).includes('skill:/skills/slide-deck'), 'and back when enabled again');
});

t.test('agents semantic discovery uses the same engine', async (t) => {
  const { app, admin } = await setup(t);
  const r = await app.inject({
    method: 'POST',
    url: '/api/agents/discover/semantic?query=someone%20to%20review%20my%20pull%20requests',
    headers: admin,
  });
  t.equal(r.statusCode, 200, r.body);
  t.equal(r.json().agents[0].path, '/code-reviewer');
  t.ok(r.json().agents[0].matching_skills.includes('review_pull_request'), 'with the skills that matched');
  t.ok(r.json().agents[0].relevance_score <= 1);
});

t.test("query words named like Object.prototype's members are words like any other", async (t) => {
  const { app, admin } = await setup(t);
  // `constructor` found Object.prototype's function in the abbreviations table: a 500 (the route fuzzer's find).
  for (const word of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
    const agents = await app.inject({
      method: 'POST',
      url: `/api/agents/discover/semantic?query=${word}`,
      headers: admin,
    });
    t.equal(agents.statusCode, 200, `agents: ${word}: ${agents.body}`);
    const all = await search(app, admin, { query: `${word} agent` });
    t.equal(all.statusCode, 200, `search: ${word}: ${all.body}`);
  }
});

t.test('an OpenAI-compatible embeddings endpoint joins the word vectors', async (t) => {
  // A fake endpoint speaking the wire protocol: 4-dim vectors keyed on a few topic words.
  const topics = ['weather', 'payment', 'code', 'email'];
  const seen: { model: string; n: number; auth?: string }[] = [];
  let down = false;
  let calls = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      calls++;
      if (down || req.url !== '/v1/embeddings') return res.writeHead(503).end('{"error":"down"}');
      const body = JSON.parse(raw) as { model: string; input: string[] };
      seen.push({ model: body.model, n: body.input.length, auth: req.headers.authorization });
      const data = body.input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: topics.map((w) => (text.toLowerCase().includes(w) ? 1 : 0.01)),
      }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: body.model }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const { app, admin } = await setup(t, {
    discovery: { embeddings: { url, model: 'fake-embed', dimensions: 4, api_key: 'sk-test-123' } },
  });
  const r = await search(app, admin, { query: 'weather forecast' });
  t.equal(r.statusCode, 200);
  t.equal(r.json().search_mode, 'hybrid');
  t.equal(r.json().servers[0].path, '/weather');
  t.ok(seen.length > 0 && seen.every((s) => s.model === 'fake-embed'), 'the endpoint was asked, with the model');
  t.ok(seen.reduce((n, s) => n + s.n, 0) > entities.servers.length, 'docs were embedded by the endpoint too');
  t.equal(seen[0]!.auth, 'Bearer sk-test-123', 'the key goes to the endpoint');
  t.notMatch(r.body, /sk-test-123/, 'and never into an answer');
  down = true;
  const degraded = await search(app, admin, { query: 'payment refund' });
  t.equal(degraded.statusCode, 200, 'an endpoint that fails leaves search working');
  t.equal(degraded.json().tools[0].server_path, '/stripe');
  const asked = calls;
  const again = await search(app, admin, { query: 'weather alerts' });
  t.equal(again.statusCode, 200);
  t.equal(calls, asked, 'a failed endpoint is left alone for a while instead of being waited on by every search');
});

t.test('Redis: two replicas agree after a write on one', async (t) => {
  const stores = await redisReplicas(t, 'redis://127.0.0.1:6379/11', [
    'registry_servers',
    'registry_agents',
    'registry_skills',
    'registry_ratings',
    'registry_generation_counters',
  ]);
  if (!stores) return;
  const [s1, s2] = stores;
  const dataDir = tempDir();
  const a = await makeApp(t, {}, { store: s1, env: { DATA_DIR: dataDir } });
  const b = await makeApp(t, {}, { store: s2, env: { DATA_DIR: dataDir } });
  const adminA = await asUser(a, ['mcp-registry-admin'], 'alice');
  const adminB = await asUser(b, ['mcp-registry-admin'], 'alice');
  const q = { query: 'tide tables for sailing harbours' };
  t.same(rankedIds((await search(b, adminB, q)).json()), [], 'nothing about tides yet');
  const reg = await a.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...FORM, ...adminA },
    payload: new URLSearchParams({
      name: 'Tides',
      description: 'Tide tables and harbour times for sailing',
      path: '/tides',
      proxy_pass_url: 'http://127.0.0.1:9/tides',
      tool_list_json: JSON.stringify([{ name: 'get_tide_table', description: 'High and low tide times of a harbour' }]),
    }).toString(),
  });
  t.equal(reg.statusCode, 201, reg.body);
  const onA = rankedIds((await search(a, adminA, q)).json());
  const onB = rankedIds((await search(b, adminB, q)).json());
  t.equal(onA[0], 'mcp_server:/tides');
  t.same(onB, onA, 'replica B answers as A does after A wrote');
  await b.inject({ method: 'DELETE', url: '/api/servers/tides', headers: adminB });
  t.same(rankedIds((await search(a, adminA, q)).json()), [], 'and A follows a delete made on B');
});

t.test("GET /api/v1/tools/search (registry tools provider) ranks with the registry's engine", async (t) => {
  const { app } = await setup(t);
  await withScope(app, {
    _id: 'weather-and-chat',
    server_access: [
      { server: 'weather', methods: ['all'] },
      { server: 'slack', methods: ['all'] },
      { server: 'gmail', methods: ['all'] },
    ],
  });
  // Tools are offered from healthy servers only (the ones a call can reach); the test's backends are not real.
  const catalog = catalogOf(app);
  for (const path of ['/weather', '/slack', '/stripe'])
    await catalog.servers.updateHealth(path, { health_status: 'healthy', last_checked_iso: new Date().toISOString() });
  const headers = {
    'x-authorization': `Bearer ${await mintToken(app, { username: 'dora', scopes: ['weather-and-chat'] })}`,
  };
  const r = await app.inject({
    method: 'GET',
    url: '/api/v1/tools/search?query=will%20it%20rain%20tomorrow&max_results=5',
    headers,
  });
  t.equal(r.statusCode, 200, r.body);
  const names = r.json().matches.map((m: { tool: { name: string } }) => m.tool.name);
  t.equal(
    names[0],
    'weather__get_forecast',
    'a paraphrase with no word of the tool finds it (the lexical path could not)',
  );
  t.ok(
    r.json().matches.every((m: { score: number }) => m.score > 0 && m.score <= 1),
    'scores are the engine relevance',
  );
  const pay = await app.inject({ method: 'GET', url: '/api/v1/tools/search?query=refund%20a%20payment', headers });
  t.notOk(
    pay.json().matches.some((m: { tool: { name: string } }) => m.tool.name.startsWith('stripe__')),
    "a healthy server outside the caller's scopes stays out",
  );
  const mail = await app.inject({ method: 'GET', url: '/api/v1/tools/search?query=send%20an%20email', headers });
  t.notOk(
    mail.json().matches.some((m: { tool: { name: string } }) => m.tool.name.startsWith('gmail__')),
    'a server that is not healthy offers no tools to call',
  );
});

t.test(
  'config: semantic off ranks lexically and says so; a bad embeddings section stops the start naming the key',
  async (t) => {
    const { app, admin } = await setup(t, { discovery: { semantic: false } });
    const r = (await search(app, admin, { query: 'github' })).json();
    t.equal(r.search_mode, 'lexical-only');
    t.equal(r.servers[0].path, '/github');
    await t.rejects(
      makeApp(t, { registry: { discovery: { embeddings: { url: 'http://127.0.0.1:9/v1', model: 'm' } } } }),
      { code: 'SB_ERR_CONFIG_INVALID', message: /registry\.discovery\.embeddings\.dimensions/ },
    );
  },
);
