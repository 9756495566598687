import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { asUser, withScope } from '../helpers/registry-auth.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const OFFICIAL = 'io.modelcontextprotocol.registry/official';

async function setup(t: Parameters<typeof makeApp>[0]) {
  const app = await makeApp(t);
  await withScope(app, {
    _id: 'two',
    server_access: [
      { server: 's3', methods: ['all'] },
      { server: 's7', methods: ['all'] },
    ],
    ui_permissions: { list_agents: ['/a3'], get_agent: ['/a3'] },
  });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  for (let i = 0; i < 9; i++) {
    const s = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: { ...FORM, ...admin },
      payload: form({
        name: `S${i}`,
        description: `Server ${i}`,
        path: `/s${i}`,
        proxy_pass_url: `http://127.0.0.1:9/${i}`,
        supported_transports: i === 3 ? 'streamable-http,sse' : 'streamable-http',
        provider_url: 'https://example.org',
      }),
    });
    if (s.statusCode !== 201) throw new Error(s.body);
    const a = await app.inject({
      method: 'POST',
      url: '/api/agents/register',
      headers: admin,
      payload: {
        name: `a${i}`,
        url: `https://agents.example/a${i}`,
        skills: [{ name: 'echo' }],
        visibility: i === 8 ? 'private' : 'public',
      },
    });
    if (a.statusCode !== 201) throw new Error(a.body);
  }
  return {
    app,
    admin,
    reader: await asUser(app, ['mcp-registry-user'], 'bob'),
    two: await asUser(app, ['two'], 'tess'),
  };
}

/** Every page of a /v0.1 list, following metadata.nextCursor. */
async function walk(
  app: Awaited<ReturnType<typeof setup>>['app'],
  url: string,
  key: 'servers' | 'agents',
  headers: Record<string, string>,
  limit: number,
) {
  const seen: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await app.inject({
      url: `${url}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      headers,
    });
    if (r.statusCode !== 200) throw new Error(r.body);
    const body = r.json() as { metadata: { nextCursor: string | null; count: number } } & Record<
      string,
      Array<Record<string, unknown>>
    >;
    if (body.metadata.count !== body[key].length) throw new Error('count does not match the page');
    seen.push(...body[key]);
    cursor = body.metadata.nextCursor;
    pages++;
  } while (cursor && pages < 50);
  return { seen, pages };
}

t.test('/v0.1/servers: MCP registry v0.1 shape, cursor paging, visibility, versions', async (t) => {
  const { app, reader, two } = await setup(t);
  const first = await app.inject({ url: '/v0.1/servers?limit=4', headers: reader });
  t.equal(first.statusCode, 200);
  const body = first.json();
  t.equal(body.servers.length, 4);
  t.same(body.metadata, { nextCursor: 'io.switchboard/s3', count: 4 });
  t.match(body.servers[0], {
    server: {
      name: 'io.switchboard/s0',
      description: 'Server 0',
      version: 'v1.0.0',
      title: 'S0',
      websiteUrl: 'https://example.org/',
      remotes: [{ type: 'streamable-http', url: /\/s0\/mcp$/ }],
    },
    _meta: {
      [OFFICIAL]: { status: 'active', isLatest: true },
      'io.switchboard/registry': { path: '/s0', is_enabled: true },
    },
  });
  t.match(
    body.servers[3].server.remotes,
    [{ type: 'streamable-http' }, { type: 'sse' }],
    'one remote per supported transport',
  );
  const all = await walk(app, '/v0.1/servers', 'servers', reader, 4);
  t.equal(all.seen.length, 9);
  t.equal(all.pages, 3);
  t.equal(new Set(all.seen.map((s) => (s.server as { name: string }).name)).size, 9, 'no repeats across pages');
  const mine = await walk(app, '/v0.1/servers', 'servers', two, 1);
  t.same(
    mine.seen.map((s) => (s.server as { name: string }).name),
    ['io.switchboard/s3', 'io.switchboard/s7'],
    'only visible servers, one per page',
  );
  t.equal((await app.inject({ url: '/v0.1/servers' })).statusCode, 401);

  const versions = await app.inject({ url: '/v0.1/servers/io.switchboard%2Fs3/versions', headers: two });
  t.equal(versions.statusCode, 200);
  t.match(versions.json(), {
    servers: [{ server: { name: 'io.switchboard/s3', version: 'v1.0.0' } }],
    metadata: { nextCursor: null, count: 1 },
  });
  t.match((await app.inject({ url: '/v0.1/servers/io.switchboard%2Fs3/versions/latest', headers: two })).json(), {
    server: { version: 'v1.0.0' },
    _meta: { [OFFICIAL]: { isLatest: true } },
  });
  t.equal((await app.inject({ url: '/v0.1/servers/io.switchboard%2Fs3/versions/v9', headers: two })).statusCode, 404);
  t.equal(
    (await app.inject({ url: '/v0.1/servers/io.switchboard%2Fs1/versions', headers: two })).statusCode,
    404,
    'a server the caller cannot see is 404',
  );
  t.equal((await app.inject({ url: '/v0.1/servers?limit=0', headers: reader })).statusCode, 422);
});

t.test('/v0.1/agents: {agents, metadata: {nextCursor}} with cursor paging and visibility', async (t) => {
  const { app, admin, reader, two } = await setup(t);
  const first = await app.inject({ url: '/v0.1/agents?limit=3', headers: reader });
  t.equal(first.statusCode, 200);
  t.same(first.json().metadata, { nextCursor: '/a2', count: 3 });
  t.match(first.json().agents[0], {
    name: 'a0',
    path: '/a0',
    url: 'https://agents.example/a0',
    skills: [{ name: 'echo' }],
    trust_level: 'unverified',
    is_enabled: true,
    metadata: {},
  });
  const asReader = await walk(app, '/v0.1/agents', 'agents', reader, 3);
  t.same(
    asReader.seen.map((a) => a.path),
    ['/a0', '/a1', '/a2', '/a3', '/a4', '/a5', '/a6', '/a7'],
    'private cards left out',
  );
  const asAdmin = await walk(app, '/v0.1/agents', 'agents', admin, 100);
  t.equal(asAdmin.seen.length, 9);
  t.equal(asAdmin.pages, 1);
  t.same(
    (await walk(app, '/v0.1/agents', 'agents', two, 2)).seen.map((a) => a.path),
    ['/a3'],
    'scoped to listed agents',
  );
  await app.inject({ method: 'POST', url: '/api/agents/a1/toggle?enabled=false', headers: admin });
  const enabled = (await app.inject({ url: '/v0.1/agents?enabled_only=true', headers: reader })).json();
  t.notOk(
    enabled.agents.some((a: { path: string }) => a.path === '/a1'),
    'enabled_only leaves disabled agents out',
  );
  t.equal((await app.inject({ url: '/v0.1/agents' })).statusCode, 401);
});
