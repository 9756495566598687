import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { asUser, mintToken, withScope } from '../helpers/registry-auth.ts';

const card = (name: string, skills: unknown[], extra: Record<string, unknown> = {}) => ({
  name,
  description: `${name} agent`,
  url: `https://agents.example/${name}`,
  version: '1.2.0',
  security_schemes: { bearer: { type: 'bearer', description: 'JWT' } },
  skills,
  ...extra,
});

async function setup(t: Parameters<typeof makeApp>[0]) {
  const app = await makeApp(t);
  // Specific paths, not 'all': a register/modify/publish permission on 'all' makes its holder an admin.
  const mine = ['/code-reviewer', '/translator', '/trusty', '/bad-url', '/x'];
  await withScope(app, {
    _id: 'publisher',
    ui_permissions: { publish_agent: mine, modify_service: mine, list_agents: ['all'], get_agent: ['all'] },
  });
  await withScope(app, {
    _id: 'one-agent',
    ui_permissions: { list_agents: ['/code-reviewer'], get_agent: ['/code-reviewer'] },
  });
  return {
    app,
    admin: await asUser(app, ['mcp-registry-admin'], 'alice'),
    reader: await asUser(app, ['mcp-registry-user'], 'bob'),
    pat: await asUser(app, ['publisher'], 'pat'),
    quinn: await asUser(app, ['publisher'], 'quinn'),
    narrow: await asUser(app, ['one-agent'], 'nora'),
  };
}

t.test('register, list, get, update, toggle, delete with ownership and permissions', async (t) => {
  const { app, admin, reader, pat, quinn, narrow } = await setup(t);
  const reg = (h: Record<string, string>, body: object) =>
    app.inject({ method: 'POST', url: '/api/agents/register', headers: h, payload: body });

  const r = await reg(
    pat,
    card(
      'code-reviewer',
      [
        { name: 'review code', description: 'Reviews' },
        { name: 'lint', tags: ['python'] },
      ],
      { path: '/code-reviewer', tags: 'dev,qa', capabilities: { streaming: true } },
    ),
  );
  t.equal(r.statusCode, 201, r.body);
  t.match(r.json(), {
    message: String,
    agent: {
      name: 'code-reviewer',
      path: '/code-reviewer',
      url: 'https://agents.example/code-reviewer',
      num_skills: 2,
      registered_at: String,
      is_enabled: true,
    },
  });
  t.equal((await reg(pat, card('x', [], { path: '/code-reviewer' }))).statusCode, 409);
  t.equal((await reg(reader, card('nope', []))).statusCode, 403, 'publish_agent needed');
  t.equal((await reg({}, card('nope', []))).statusCode, 401);
  t.equal((await reg(pat, { description: 'no name' })).statusCode, 422);
  t.equal((await reg(pat, card('bad-url', [], { url: 'ftp://x' }))).statusCode, 400);
  const selfTrusted = await reg(
    pat,
    card('trusty', [], { trust_level: 'trusted', trustLevel: 'trusted', isEnabled: false }),
  );
  t.equal(selfTrusted.statusCode, 201, 'a card carrying server fields registers');
  const trusty = (await app.inject({ url: '/api/agents/trusty', headers: pat })).json();
  t.match(trusty, { trust_level: 'unverified', is_enabled: true }, 'registration never sets trust or enabled state');
  t.notOk(
    'trustLevel' in trusty || 'isEnabled' in trusty || 'trustLevel' in trusty.metadata,
    'camelCase twins of server fields are not echoed',
  );
  t.equal((await app.inject({ method: 'DELETE', url: '/api/agents/trusty', headers: pat })).statusCode, 204);
  t.equal(
    (await reg(admin, card('Secret Agent', ['spy'], { visibility: 'private' }))).json().agent.path,
    '/secret-agent',
    'path from the name',
  );
  await reg(quinn, card('translator', [{ name: 'translate' }], { visibility: 'internal' }));

  const list = async (h: Record<string, string>, q = '') =>
    (await app.inject({ url: `/api/agents${q}`, headers: h })).json();
  t.same(
    (await list(reader)).agents.map((a: { path: string }) => a.path),
    ['/code-reviewer', '/translator'],
    'private cards hidden',
  );
  t.equal((await list(reader)).total_count, 2);
  t.same(
    (await list(admin)).agents.map((a: { path: string }) => a.path),
    ['/code-reviewer', '/secret-agent', '/translator'],
  );
  t.same(
    (await list(narrow)).agents.map((a: { path: string }) => a.path),
    ['/code-reviewer'],
    'scoped to listed agents',
  );
  t.same(
    (await list(reader, '?visibility=internal')).agents.map((a: { path: string }) => a.path),
    ['/translator'],
  );
  t.same(
    (await list(reader, '?query=lint')).agents.map((a: { path: string }) => a.path),
    ['/code-reviewer'],
    'query matches skills',
  );
  t.equal((await app.inject({ url: '/api/agents' })).statusCode, 401);

  const got = await app.inject({ url: '/api/agents/code-reviewer', headers: narrow });
  t.equal(got.statusCode, 200);
  t.match(got.json(), {
    name: 'code-reviewer',
    path: '/code-reviewer',
    version: '1.2.0',
    skills: [{ name: 'review code', description: 'Reviews' }, { name: 'lint' }],
    is_enabled: true,
    metadata: { capabilities: { streaming: true } },
    security_schemes: { bearer: { type: 'bearer' } },
  });
  t.equal((await app.inject({ url: '/api/agents/translator', headers: narrow })).statusCode, 403);
  t.equal((await app.inject({ url: '/api/agents/secret-agent', headers: reader })).statusCode, 403);
  t.equal((await app.inject({ url: '/api/agents/none', headers: reader })).statusCode, 404);

  const put = (h: Record<string, string>, path: string, body: object) =>
    app.inject({ method: 'PUT', url: `/api/agents/${path}`, headers: h, payload: body });
  const upd = await put(
    pat,
    'code-reviewer',
    card('code-reviewer', [{ name: 'review code' }], { description: 'v2', version: '2.0.0' }),
  );
  t.equal(upd.statusCode, 200, upd.body);
  t.match(upd.json(), { description: 'v2', version: '2.0.0', num_skills: 1, registered_by: 'pat' });
  t.equal((await put(quinn, 'code-reviewer', card('code-reviewer', []))).statusCode, 403, 'not the owner');
  t.equal((await put(reader, 'code-reviewer', card('code-reviewer', []))).statusCode, 403, 'no modify permission');
  t.equal(
    (
      await put(admin, 'code-reviewer', card('code-reviewer', [{ name: 'review code' }], { trust_level: 'verified' }))
    ).json().trust_level,
    'verified',
    'admins may change any card',
  );

  const toggle = (h: Record<string, string>, path: string, enabled: boolean) =>
    app.inject({ method: 'POST', url: `/api/agents/${path}/toggle?enabled=${enabled}`, headers: h });
  t.equal((await toggle(pat, 'code-reviewer', false)).statusCode, 403, 'toggle_service needed');
  t.same((await toggle(admin, 'code-reviewer', false)).json(), {
    path: '/code-reviewer',
    is_enabled: false,
    message: 'Agent /code-reviewer disabled',
  });
  t.same(
    (await list(reader, '?enabled_only=true')).agents.map((a: { path: string }) => a.path),
    ['/translator'],
  );

  t.equal((await app.inject({ method: 'DELETE', url: '/api/agents/translator', headers: pat })).statusCode, 403);
  t.equal((await app.inject({ method: 'DELETE', url: '/api/agents/translator', headers: quinn })).statusCode, 204);
  t.equal((await app.inject({ method: 'DELETE', url: '/api/agents/secret-agent', headers: admin })).statusCode, 204);
  t.equal((await app.inject({ method: 'DELETE', url: '/api/agents/translator', headers: admin })).statusCode, 404);

  const bound = {
    authorization: `Bearer ${await mintToken(app, { username: 'alice', scopes: ['mcp-registry-admin'], resource: { type: 'agent', id: 'code-reviewer' } })}`,
  };
  t.equal((await app.inject({ url: '/api/agents/code-reviewer', headers: bound })).statusCode, 200);
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/api/agents/code-reviewer', headers: bound })).statusCode,
    204,
    'a bound admin token may act on its own agent',
  );
});

t.test('discovery by skills: 0.6 skills + 0.2 tags + 0.2 trust; limits and 400', async (t) => {
  const { app, admin, reader } = await setup(t);
  const reg = (body: object) =>
    app.inject({ method: 'POST', url: '/api/agents/register', headers: admin, payload: body });
  // Trust is the registry's to give: an admin sets it after registration.
  const trusted = async (body: { name: string }, trust_level: string) => {
    await reg(body);
    await app.inject({
      method: 'PUT',
      url: `/api/agents/${body.name}`,
      headers: admin,
      payload: { ...body, trust_level },
    });
  };
  await trusted(card('a', [{ name: 'translate' }, { name: 'summarize' }], { tags: 'nlp' }), 'trusted');
  await trusted(card('b', [{ name: 'Translate' }], { tags: 'nlp' }), 'community');
  await trusted(card('c', [{ name: 'summarize', id: 'sum' }]), 'verified');
  await reg(card('d', [{ name: 'cook' }]));
  await reg(card('e', [{ name: 'translate' }], { visibility: 'private' }));
  await reg(card('f', [{ name: 'translate' }]));
  await app.inject({ method: 'POST', url: '/api/agents/f/toggle?enabled=false', headers: admin });

  const discover = (h: Record<string, string>, body: object, q = '') =>
    app.inject({ method: 'POST', url: `/api/agents/discover${q}`, headers: h, payload: body });
  const r = await discover(reader, { skills: ['translate', 'summarize'], tags: ['nlp'] });
  t.equal(r.statusCode, 200);
  const got = r
    .json()
    .agents.map((a: { path: string; relevance_score: number; matching_skills: string[] }) => [
      a.path,
      a.relevance_score,
      a.matching_skills,
    ]);
  t.same(
    got,
    [
      ['/a', 1, ['translate', 'summarize']], // 0.6 + 0.2 + 0.2 x 1.0
      ['/b', 0.54, ['Translate']], // 0.3 + 0.2 + 0.2 x 0.2
      ['/c', 0.4, ['summarize']], // 0.3 + 0 + 0.2 x 0.5
    ],
    'private (e), disabled (f) and non-matching (d) agents are left out',
  );
  t.same(
    (await discover(reader, { skills: ['sum'] })).json().agents.map((a: { path: string }) => a.path),
    ['/c'],
    'skill ids match too',
  );
  t.equal((await discover(reader, { skills: ['translate'] }, '?max_results=1')).json().agents.length, 1);
  t.same(
    (await discover(admin, { skills: ['translate'] })).json().agents.map((a: { path: string }) => a.path),
    ['/a', '/b', '/e'],
    'the admin sees private cards',
  );
  for (const body of [{ skills: [] }, { skills: ['  '] }, {}]) {
    const bad = await discover(reader, body);
    t.equal(bad.statusCode, 400, JSON.stringify(body));
    t.equal(bad.json().code, 'SB_ERR_REGISTRY_NO_SKILLS');
  }
  t.equal((await discover(reader, { skills: ['x'] }, '?max_results=101')).statusCode, 422);
  t.equal((await discover(reader, { skills: ['x'] }, '?max_results=0')).statusCode, 422);
  t.equal((await discover({}, { skills: ['x'] })).statusCode, 401);
});

t.test('semantic discovery: ranked by the discovery engine, 400 on empty query', async (t) => {
  const { app, admin, reader } = await setup(t);
  const reg = (body: object) =>
    app.inject({ method: 'POST', url: '/api/agents/register', headers: admin, payload: body });
  await reg(
    card('weather-bot', [{ name: 'forecast', description: 'Weather forecasts for a city' }], {
      description: 'Answers questions about the weather',
    }),
  );
  await reg(
    card('travel-bot', [{ name: 'book flight' }], { description: 'Books flights; mentions weather sometimes' }),
  );
  await reg(card('chef', [{ name: 'recipes' }], { description: 'Cooking help' }));
  const s = await app.inject({
    method: 'POST',
    url: '/api/agents/discover/semantic?query=weather%20forecast',
    headers: reader,
  });
  t.equal(s.statusCode, 200);
  const agents = s.json().agents;
  t.equal(agents[0].path, '/weather-bot');
  // Scores are the discovery engine's relevance in [0, 1] (docs/discovery.md), not rescaled to the best hit.
  t.ok(agents[0].relevance_score > 0.5 && agents[0].relevance_score <= 1, `top score ${agents[0].relevance_score}`);
  t.ok(agents.length >= 2 && agents[1].relevance_score < agents[0].relevance_score);
  t.notOk(agents.some((a: { path: string }) => a.path === '/chef'));
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/agents/discover/semantic?query=weather&max_results=1',
        headers: reader,
      })
    ).json().agents.length,
    1,
  );
  for (const q of ['', '?query=', '?query=%20%20']) {
    const r = await app.inject({ method: 'POST', url: `/api/agents/discover/semantic${q}`, headers: reader });
    t.equal(r.statusCode, 400, `query '${q}'`);
    t.equal(r.json().code, 'SB_ERR_REGISTRY_EMPTY_QUERY');
  }
  // The index follows changes.
  await app.inject({ method: 'DELETE', url: '/api/agents/weather-bot', headers: admin });
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/agents/discover/semantic?query=forecast', headers: reader })).json()
      .agents.length,
    0,
  );
});

t.test(
  'agent cards: camelCase aliases of client fields accepted, server fields never taken, extensions only under metadata',
  async (t) => {
    const { app, admin, pat } = await setup(t);
    const body = {
      name: 'x',
      description: 'x agent',
      url: 'https://agents.example/x',
      version: '2.0.0',
      protocolVersion: '0.3.0',
      securitySchemes: { key: { type: 'api_key', description: 'header key' } },
      skills: [{ name: 'echo', inputSchema: { type: 'object' } }],
      // What a client might copy from a fetched card, or assert about itself:
      isEnabled: false,
      trustLevel: 'verified',
      trust_level: 'trusted',
      numSkills: 99,
      registeredBy: 'mallory',
      id: 'forged',
      capabilities: { streaming: true },
      defaultInputModes: ['text'],
      metadata: { team: 'qa' },
    };
    t.equal(
      (await app.inject({ method: 'POST', url: '/api/agents/register', headers: pat, payload: body })).statusCode,
      201,
    );
    const card = (await app.inject({ url: '/api/agents/x', headers: pat })).json();
    t.match(
      card,
      {
        protocol_version: '0.3.0',
        security_schemes: { key: { type: 'api_key' } },
        skills: [{ name: 'echo', input_schema: { type: 'object' } }],
      },
      'camelCase aliases become the spec names',
    );
    t.match(
      card,
      { trust_level: 'unverified', is_enabled: true, num_skills: 1, registered_by: 'pat' },
      "server-controlled fields are the server's",
    );
    t.not(card.id, 'forged');
    t.same(
      card.metadata,
      { team: 'qa', capabilities: { streaming: true }, defaultInputModes: ['text'] },
      'unknown fields only under metadata',
    );
    for (const k of [
      'isEnabled',
      'trustLevel',
      'numSkills',
      'registeredBy',
      'protocolVersion',
      'securitySchemes',
      'capabilities',
      'defaultInputModes',
    ])
      t.notOk(k in card, `${k} is not at the top level`);

    // An admin changes trust with PUT; a camelCase twin is still ignored there.
    const put = await app.inject({
      method: 'PUT',
      url: '/api/agents/x',
      headers: admin,
      payload: { ...body, trust_level: 'verified', trustLevel: 'trusted' },
    });
    t.equal(put.statusCode, 200, put.body);
    t.equal(put.json().trust_level, 'verified');
    t.notOk('trustLevel' in put.json());
    const patPut = await app.inject({
      method: 'PUT',
      url: '/api/agents/x',
      headers: pat,
      payload: { ...body, trust_level: 'trusted' },
    });
    t.equal(patPut.statusCode, 403, 'only admins change trust');
  },
);
