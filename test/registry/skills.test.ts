import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { asUser, withScope } from '../helpers/registry-auth.ts';

const SKILL_MD = '---\nname: pdf-tools\ndescription: Work with PDFs\n---\n# PDF tools\nUse pdftotext.\n';

/** A local server for SKILL.md documents (loopback: the registry must be told to allow private URLs). */
async function skillHost(t: { teardown: (fn: () => unknown) => void }): Promise<string> {
  const server: Server = createServer((req, res) => {
    if (req.url === '/pdf/SKILL.md') return res.writeHead(200, { 'content-type': 'text/markdown' }).end(SKILL_MD);
    if (req.url === '/v2/SKILL.md') return res.writeHead(200).end('# v2\n');
    if (req.url === '/to-metadata')
      return res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (req.url === '/hop') return res.writeHead(302, { location: '/pdf/SKILL.md' }).end();
    if (req.url === '/empty') return res.writeHead(200).end('   ');
    res.writeHead(404).end('nope');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function setup(t: Parameters<typeof makeApp>[0], allow = true) {
  const app = await makeApp(t, { registry: { allow_private_skill_urls: allow, skill_fetch_timeout_ms: 2000 } });
  await withScope(app, {
    _id: 'skill-author',
    ui_permissions: { publish_agent: ['/skills/pdf-tools', '/skills/other', '/skills/mine'] },
  });
  return {
    app,
    host: await skillHost(t),
    admin: await asUser(app, ['mcp-registry-admin'], 'alice'),
    reader: await asUser(app, ['mcp-registry-user'], 'bob'),
    author: await asUser(app, ['skill-author'], 'ann'),
    author2: await asUser(app, ['skill-author'], 'abe'),
  };
}

t.test('register fetches SKILL.md; CRUD, toggle, rating with ownership', async (t) => {
  const { app, host, admin, reader, author, author2 } = await setup(t);
  const post = (h: Record<string, string>, body: object) =>
    app.inject({ method: 'POST', url: '/api/skills', headers: h, payload: body });
  const body = {
    name: 'pdf-tools',
    description: 'Work with PDFs',
    skill_md_url: `${host}/pdf/SKILL.md`,
    tags: 'pdf,docs',
    allowed_tools: ['bash'],
  };

  const r = await post(author, body);
  t.equal(r.statusCode, 201, r.body);
  t.match(r.json(), {
    path: '/skills/pdf-tools',
    name: 'pdf-tools',
    status: 'draft',
    visibility: 'public',
    is_enabled: true,
    tags: ['pdf', 'docs'],
    registered_by: 'ann',
  });
  t.notOk('skill_md' in r.json(), 'the document is not echoed in the summary');
  t.equal((await post(author, body)).statusCode, 409);
  t.equal((await post(reader, { ...body, name: 'other' })).statusCode, 403);
  t.equal((await post({}, { ...body, name: 'other' })).statusCode, 401);
  for (const name of ['PDF', 'a--b', '-a', 'x'.repeat(65), 'a_b'])
    t.equal((await post(author, { ...body, name })).statusCode, 422, `name '${name}'`);
  t.equal((await post(author, { name: 'other', description: 'd' })).statusCode, 422, 'skill_md_url required');
  const missing = await post(author, { ...body, name: 'other', skill_md_url: `${host}/missing.md` });
  t.equal(missing.statusCode, 400);
  t.equal(missing.json().code, 'SB_ERR_REGISTRY_SKILL_FETCH');
  t.equal((await post(author, { ...body, name: 'other', skill_md_url: `${host}/empty` })).statusCode, 400);
  t.equal((await post(author, { ...body, name: 'other', skill_md_url: 'file:///etc/passwd' })).statusCode, 400);
  t.equal(
    (await post(author, { ...body, name: 'other', skill_md_url: `${host}/hop` })).statusCode,
    201,
    'a redirect to an allowed address is followed',
  );

  const one = await app.inject({ url: '/api/skills/pdf-tools', headers: reader });
  t.equal(one.statusCode, 200);
  t.equal(one.json().skill_md, SKILL_MD);
  t.equal(
    (await app.inject({ url: '/api/skills/skills/pdf-tools', headers: reader })).json().path,
    '/skills/pdf-tools',
    'full path form',
  );
  t.equal((await app.inject({ url: '/api/skills/none', headers: reader })).statusCode, 404);

  await post(author, { ...body, name: 'mine', visibility: 'private' });
  const list = await app.inject({ url: '/api/skills?limit=1', headers: reader });
  t.match(list.json(), { total: 2, limit: 1, offset: 0 });
  t.equal(list.json().skills.length, 1);
  t.same(
    (await app.inject({ url: '/api/skills?offset=1', headers: reader }))
      .json()
      .skills.map((s: { name: string }) => s.name),
    ['pdf-tools'],
  );
  t.equal((await app.inject({ url: '/api/skills', headers: author })).json().total, 3, 'owner sees its private skill');
  t.equal((await app.inject({ url: '/api/skills/mine', headers: reader })).statusCode, 403);

  const put = (h: Record<string, string>, b: object) =>
    app.inject({ method: 'PUT', url: '/api/skills/pdf-tools', headers: h, payload: b });
  t.equal((await put(author2, { description: 'x' })).statusCode, 403, 'not the owner');
  t.equal((await put(reader, { description: 'x' })).statusCode, 403);
  const upd = await put(author, { description: 'PDFs v2', skill_md_url: `${host}/v2/SKILL.md`, status: 'active' });
  t.equal(upd.statusCode, 200);
  t.match(upd.json(), { description: 'PDFs v2', status: 'active' });
  t.equal(
    (await app.inject({ url: '/api/skills/pdf-tools', headers: reader })).json().skill_md,
    '# v2\n',
    'a new URL is fetched again',
  );
  t.equal((await put(author, { skill_md_url: `${host}/missing` })).statusCode, 400);

  const toggle = (h: Record<string, string>, enabled: unknown) =>
    app.inject({ method: 'POST', url: '/api/skills/pdf-tools/toggle', headers: h, payload: { enabled } });
  t.equal((await toggle(reader, false)).statusCode, 403);
  t.same((await toggle(author, false)).json(), {
    path: '/skills/pdf-tools',
    is_enabled: false,
    message: 'Skill /skills/pdf-tools disabled',
  });
  t.equal((await toggle(admin, 'maybe')).statusCode, 400);
  t.equal((await app.inject({ url: '/api/skills?enabled_only=true', headers: reader })).json().total, 1);

  const rate = (h: Record<string, string>, rating: number) =>
    app.inject({ method: 'POST', url: '/api/skills/pdf-tools/rating', headers: h, payload: { rating } });
  t.equal((await rate(reader, 5)).statusCode, 201);
  t.match((await rate(admin, 2)).json(), { num_stars: 3.5, num_ratings: 2 });
  t.equal((await rate(reader, 9)).statusCode, 400);
  t.match((await app.inject({ url: '/api/skills/pdf-tools/rating', headers: reader })).json(), { num_ratings: 2 });
  t.equal((await app.inject({ url: '/api/skills/pdf-tools', headers: reader })).json().num_stars, 3.5);

  t.equal((await app.inject({ method: 'DELETE', url: '/api/skills/pdf-tools', headers: author2 })).statusCode, 403);
  t.equal((await app.inject({ method: 'DELETE', url: '/api/skills/pdf-tools', headers: author })).statusCode, 200);
  t.equal((await app.inject({ url: '/api/skills/pdf-tools', headers: admin })).statusCode, 404);
});

t.test('SSRF guard: private, loopback, link-local and metadata addresses', async (t) => {
  const strict = await setup(t, false);
  const post = (url: string) =>
    strict.app.inject({
      method: 'POST',
      url: '/api/skills',
      headers: strict.admin,
      payload: { name: 'guarded', description: 'd', skill_md_url: url },
    });
  for (const url of [
    `${strict.host}/pdf/SKILL.md`,
    'http://localhost:1/SKILL.md',
    'http://10.1.2.3/SKILL.md',
    'http://192.168.0.1/SKILL.md',
    'http://169.254.10.10/SKILL.md',
    'http://169.254.169.254/latest/',
    'http://[::1]:1/x',
    'http://metadata.google.internal/x',
  ]) {
    const r = await post(url);
    t.equal(r.statusCode, 400, url);
    t.equal(r.json().code, 'SB_ERR_REGISTRY_SKILL_URL_REFUSED', url);
  }
  const open = await setup(t, true);
  const viaRedirect = await open.app.inject({
    method: 'POST',
    url: '/api/skills',
    headers: open.admin,
    payload: { name: 'guarded', description: 'd', skill_md_url: `${open.host}/to-metadata` },
  });
  t.equal(viaRedirect.statusCode, 400, 'every redirect hop is judged; metadata stays refused');
  t.match(viaRedirect.json().detail, /metadata/);
});
