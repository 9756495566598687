import t from 'tap';
import { decodeJwt } from 'jose';
import { makeApp } from '../helpers/app.ts';
import { adminBasic, asUser, mintToken } from '../helpers/registry-auth.ts';
import { openStore } from '../../core/store.ts';

t.test('POST /api/tokens/generate', async (t) => {
  const app = await makeApp(t, { registry: { admin_password: 'admin-pass-for-tests' } });
  const admin = await asUser(app, ['mcp-registry-admin', 'mcp-registry-user'], 'ada');
  const restricted = {
    authorization: `Bearer ${await mintToken(app, { username: 'rita', groups: ['mcp-servers-restricted'] })}`,
  };
  const gen = (headers: Record<string, string>, payload: unknown) =>
    app.inject({ method: 'POST', url: '/api/tokens/generate', headers, payload: payload as object });

  t.test('defaults: all of the caller scopes, 8 h, token_kind user, the reference claims', async (t) => {
    const res = await gen(admin, {});
    t.equal(res.statusCode, 200);
    const body = res.json();
    t.equal(body.token_type, 'Bearer');
    t.equal(body.expires_in, 8 * 3600);
    t.equal(body.scope, 'mcp-registry-admin mcp-registry-user');
    t.notOk('refresh_token' in body);
    const c = decodeJwt(body.access_token);
    t.equal(c.iss, 'mcp-auth-server');
    t.equal(c.aud, 'mcp-registry');
    t.equal(c.sub, 'ada');
    t.equal(c.preferred_username, 'ada');
    t.equal(c.token_use, 'access');
    t.equal(c.token_kind, 'user');
    t.equal(c.scope, 'mcp-registry-admin mcp-registry-user');
    t.equal((c.exp as number) - (c.iat as number), 8 * 3600);
    t.notOk('resource_type' in c);
    // The minted token works.
    const me = await app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${body.access_token}` } });
    t.equal(me.json().username, 'ada');
  });

  t.test('requested_scopes: a subset narrows, anything else is 403', async (t) => {
    let res = await gen(admin, { requested_scopes: ['mcp-registry-user'] });
    t.equal(res.statusCode, 200);
    t.equal(res.json().scope, 'mcp-registry-user');
    const narrowed = await app.inject({
      url: '/api/auth/me',
      headers: { authorization: `Bearer ${res.json().access_token}` },
    });
    t.equal(narrowed.json().is_admin, false, 'the narrowed token is not admin');
    res = await gen(restricted, { requested_scopes: ['mcp-registry-admin'] });
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'SB_ERR_TOKEN_SCOPES_EXCEED');
    t.match(res.json().detail, /mcp-registry-admin/);
    res = await gen(admin, { requested_scopes: ['mcp-registry-user', 'made-up'] });
    t.equal(res.statusCode, 403);
    res = await gen(admin, { requested_scopes: [] });
    t.equal(res.statusCode, 400);
  });

  t.test('expires_in_hours 1..24', async (t) => {
    for (const h of [1, 24]) {
      const res = await gen(admin, { expires_in_hours: h });
      t.equal(res.statusCode, 200);
      t.equal(res.json().expires_in, h * 3600);
    }
    for (const h of [0, 25, -3]) {
      const res = await gen(admin, { expires_in_hours: h });
      t.equal(res.statusCode, 400, `${h} h`);
      t.match(res.json().detail, /between 1 and 24/);
    }
    const res = await gen(admin, { expires_in_hours: 'soon' });
    t.equal(res.statusCode, 422);
  });

  t.test('resource binding: normalised ids, token_kind resource, claims', async (t) => {
    const res = await gen(admin, {
      resource: { type: 'server', id: '//currenttime/' },
      description: 'CI for currenttime',
    });
    t.equal(res.statusCode, 200);
    const c = decodeJwt(res.json().access_token);
    t.equal(c.token_kind, 'resource');
    t.equal(c.resource_type, 'server');
    t.equal(c.resource_id, 'currenttime');
    const nested = await gen(admin, { resource: { type: 'skill', id: '/skills/pdf-tools/' } });
    t.equal(decodeJwt(nested.json().access_token).resource_id, 'skills/pdf-tools');
  });

  t.test('resource id rejections (400) and shape errors (422)', async (t) => {
    for (const id of [
      '../etc',
      'a/../b',
      'a%2Fb',
      'a%2e%2e',
      'bad\u0000id',
      'tab\tid',
      'nl\nid',
      '\u007f',
      '///',
      '',
    ]) {
      const res = await gen(admin, { resource: { type: 'server', id } });
      t.equal(res.statusCode, 400, JSON.stringify(id));
      t.equal(res.json().code, 'SB_ERR_TOKEN_RESOURCE_ID');
    }
    let res = await gen(admin, { resource: { type: 'database', id: 'x' } });
    t.equal(res.statusCode, 422);
    t.ok(res.json().detail.some((d: { loc: string[] }) => d.loc.includes('type')));
    for (const id of [5, true, null, ['a'], { a: 1 }]) {
      res = await gen(admin, { resource: { type: 'server', id } });
      t.equal(res.statusCode, 422, JSON.stringify(id));
      t.same(res.json().detail[0].loc, ['body', 'resource', 'id']);
    }
    res = await gen(admin, { resource: { type: 'server' } });
    t.equal(res.statusCode, 422);
  });

  t.test('403 for a resource the caller cannot reach', async (t) => {
    let res = await gen(restricted, { resource: { type: 'server', id: 'currenttime' } });
    t.equal(res.statusCode, 200, 'in scope');
    res = await gen(restricted, { resource: { type: 'server', id: 'fininfo' } });
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'SB_ERR_TOKEN_RESOURCE_FORBIDDEN');
    res = await gen(restricted, { resource: { type: 'agent', id: 'code-reviewer' } });
    t.equal(res.statusCode, 200, 'agent in scope');
    res = await gen(restricted, { resource: { type: 'agent', id: 'other-agent' } });
    t.equal(res.statusCode, 403);
    res = await gen(restricted, { resource: { type: 'skill', id: 'pdf' } });
    t.equal(res.statusCode, 403);
  });

  t.test('who may mint: no credentials 401, bound tokens 403, session needs CSRF', async (t) => {
    let res = await gen({}, {});
    t.equal(res.statusCode, 401);
    const bound = await mintToken(app, {
      username: 'ada',
      scopes: ['mcp-registry-admin'],
      resource: { type: 'server', id: 'currenttime' },
    });
    res = await gen({ authorization: `Bearer ${bound}` }, {});
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'SB_ERR_TOKEN_RESOURCE_BOUND');
    const login = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'admin', password: 'admin-pass-for-tests' },
    });
    const cookies = (login.headers['set-cookie'] as string[]).map((c) => c.split(';')[0]);
    const cookie = cookies.join('; ');
    res = await gen({ cookie }, {});
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'SB_ERR_AUTH_CSRF');
    const csrf = (await app.inject({ url: '/api/auth/csrf', headers: { cookie } })).json().csrf_token;
    res = await gen({ cookie, 'x-csrf-token': csrf }, {});
    t.equal(res.statusCode, 200);
    t.equal(decodeJwt(res.json().access_token).sub, 'admin');
    res = await gen(adminBasic(app), { expires_in_hours: 2 });
    t.equal(res.statusCode, 200, 'the admin over Basic');
  });
});

t.test('429 past the per-user hourly limit, counted in the shared store', async (t) => {
  const store = await openStore({ backend: 'memory' });
  const a = await makeApp(
    t,
    { registry: { token_mint_limit_per_hour: 3, secret_key: 'shared-secret-key-for-replicas' } },
    { store },
  );
  const b = await makeApp(
    t,
    { registry: { token_mint_limit_per_hour: 3, secret_key: 'shared-secret-key-for-replicas' } },
    { store },
  );
  const h = await asUser(a, ['mcp-registry-user'], 'lim');
  const gen = (app: typeof a) => app.inject({ method: 'POST', url: '/api/tokens/generate', headers: h, payload: {} });
  t.equal((await gen(a)).statusCode, 200);
  t.equal((await gen(b)).statusCode, 200, 'the other replica shares the count');
  t.equal((await gen(a)).statusCode, 200);
  const res = await gen(b);
  t.equal(res.statusCode, 429);
  t.equal(res.json().code, 'SB_ERR_TOKEN_RATE_LIMIT');
  const other = await asUser(a, ['mcp-registry-user'], 'someone-else');
  t.equal(
    (await a.inject({ method: 'POST', url: '/api/tokens/generate', headers: other, payload: {} })).statusCode,
    200,
    'per user',
  );
});

t.test('the mint limit holds across replicas sharing Redis', async (t) => {
  const stores = [
    await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' }),
    await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' }),
  ];
  t.teardown(() => Promise.all(stores.map((s) => s.close())));
  const cfg = { registry: { token_mint_limit_per_hour: 2, secret_key: 'shared-secret-key-for-redis-replicas' } };
  const [a, b] = [await makeApp(t, cfg, { store: stores[0] }), await makeApp(t, cfg, { store: stores[1] })];
  const username = `redis-limit-${process.pid}-${Date.now()}`;
  const h = await asUser(a, ['mcp-registry-user'], username);
  const gen = (app: typeof a) => app.inject({ method: 'POST', url: '/api/tokens/generate', headers: h, payload: {} });
  t.equal((await gen(a)).statusCode, 200);
  t.equal((await gen(b)).statusCode, 200);
  t.equal((await gen(a)).statusCode, 429, 'replica a sees the mint made on b');
  t.equal((await gen(b)).statusCode, 429);
});

t.test('GET /api/tokens and GET /api/admin/tokens without an IdP', async (t) => {
  const app = await makeApp(t);
  let res = await app.inject({ url: '/api/tokens' });
  t.equal(res.statusCode, 302);
  t.equal(res.headers.location, '/api/auth/login');
  res = await app.inject({ url: '/api/tokens', headers: await asUser(app, ['mcp-registry-user']) });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /text\/html/);
  t.match(res.body, /\/api\/tokens\/generate/);
  res = await app.inject({ url: '/api/admin/tokens', headers: await asUser(app, ['mcp-registry-user']) });
  t.equal(res.statusCode, 403);
  res = await app.inject({ url: '/api/admin/tokens' });
  t.equal(res.statusCode, 401);
  res = await app.inject({ url: '/api/admin/tokens', headers: await asUser(app, ['mcp-registry-admin']) });
  t.equal(res.statusCode, 503);
  t.match(res.json().detail, /No identity provider/);
});
