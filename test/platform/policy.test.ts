import t from 'tap';
import { apiKeyUsers, keyHeader } from '../fixtures/api-key-users.ts';
import { makeApp } from '../helpers/app.ts';

// alice is a plain user, root an admin.
const users = { alice: {}, root: { admin: true } };
const user = keyHeader('alice');
const admin = keyHeader('root');
const BODY = 'permit(principal, action, resource);';

t.test('noop mode: engines and policies CRUD with data', async (t) => {
  const app = await makeApp(t);
  const enf = await app.inject({ method: 'GET', url: '/api/v1/policy/enforcement' });
  t.equal(enf.statusCode, 200);
  t.same(enf.json(), { engine_id: null, enabled: false });

  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/policy/engines',
    payload: { name: 'main', description: 'guards the gateway' },
  });
  t.equal(created.statusCode, 201);
  const engine = created.json();
  t.match(engine, { engine_id: /./, name: 'main', description: 'guards the gateway' });
  const eid = engine.engine_id as string;

  t.same((await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${eid}` })).json(), engine);
  const list = await app.inject({ method: 'GET', url: '/api/v1/policy/engines' });
  t.same(list.json(), { engines: [engine], next_token: null });

  const pol = await app.inject({
    method: 'POST',
    url: `/api/v1/policy/engines/${eid}/policies`,
    payload: { policy_body: BODY, description: 'allow all' },
  });
  t.equal(pol.statusCode, 201);
  const pid = pol.json().policy_id as string;
  t.match(pol.json(), { engine_id: eid, policy_body: BODY, description: 'allow all' });

  const got = await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${eid}/policies/${pid}` });
  t.same(got.json(), pol.json());
  const plist = await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${eid}/policies` });
  t.same(
    plist.json().policies.map((p: { policy_id: string }) => p.policy_id),
    [pid],
  );

  const upd = await app.inject({
    method: 'PUT',
    url: `/api/v1/policy/engines/${eid}/policies/${pid}`,
    payload: { description: 'changed' },
  });
  t.equal(upd.statusCode, 200);
  t.match(upd.json(), { policy_body: BODY, description: 'changed' });

  const del = await app.inject({ method: 'DELETE', url: `/api/v1/policy/engines/${eid}/policies/${pid}` });
  t.equal(del.statusCode, 204);
  t.equal(del.body, '');
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${eid}/policies/${pid}` })).statusCode, 404);

  t.equal((await app.inject({ method: 'DELETE', url: `/api/v1/policy/engines/${eid}` })).statusCode, 204);
  const gone = await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${eid}` });
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().code, 'SB_ERR_POLICY_ENGINE_NOT_FOUND');
});

t.test('paging with max_results and next_token; bad token 400', async (t) => {
  const app = await makeApp(t);
  for (let i = 0; i < 3; i++)
    await app.inject({ method: 'POST', url: '/api/v1/policy/engines', payload: { name: `e${i}` } });
  const first = await app.inject({ method: 'GET', url: '/api/v1/policy/engines?max_results=2' });
  t.equal(first.json().engines.length, 2);
  t.type(first.json().next_token, 'string');
  const second = await app.inject({
    method: 'GET',
    url: `/api/v1/policy/engines?max_results=2&next_token=${first.json().next_token}`,
  });
  t.equal(second.json().engines.length, 1);
  t.equal(second.json().next_token, null);
  const bad = await app.inject({ method: 'GET', url: '/api/v1/policy/engines?next_token=zzz' });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().code, 'SB_ERR_POLICY_BAD_TOKEN');
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/policy/engines?max_results=0' })).statusCode, 422);
});

t.test('unknown engine or policy is 404 on every route', async (t) => {
  const app = await makeApp(t);
  const eng = (await app.inject({ method: 'POST', url: '/api/v1/policy/engines', payload: { name: 'x' } })).json()
    .engine_id as string;
  const cases: Array<[string, string, unknown?]> = [
    ['GET', '/api/v1/policy/engines/nope'],
    ['DELETE', '/api/v1/policy/engines/nope'],
    ['POST', '/api/v1/policy/engines/nope/policies', { policy_body: BODY }],
    ['GET', '/api/v1/policy/engines/nope/policies'],
    ['GET', '/api/v1/policy/engines/nope/policies/p'],
    ['PUT', '/api/v1/policy/engines/nope/policies/p', { description: 'x' }],
    ['DELETE', '/api/v1/policy/engines/nope/policies/p'],
    ['GET', `/api/v1/policy/engines/${eng}/policies/p`],
    ['PUT', `/api/v1/policy/engines/${eng}/policies/p`, { description: 'x' }],
    ['DELETE', `/api/v1/policy/engines/${eng}/policies/p`],
  ];
  for (const [method, url, payload] of cases) {
    const res = await app.inject({ method: method as 'GET', url, payload: payload as object });
    t.equal(res.statusCode, 404, `${method} ${url}`);
    t.match(res.json().code, /^SB_ERR_POLICY_(ENGINE_)?NOT_FOUND$/);
  }
});

t.test('bad input is 422 naming the field', async (t) => {
  const app = await makeApp(t);
  const noName = await app.inject({ method: 'POST', url: '/api/v1/policy/engines', payload: { description: 'x' } });
  t.equal(noName.statusCode, 422);
  t.match(noName.json().detail, [{ loc: ['body', 'name'] }]);
  const eng = (await app.inject({ method: 'POST', url: '/api/v1/policy/engines', payload: { name: 'x' } })).json()
    .engine_id as string;
  const empty = await app.inject({
    method: 'POST',
    url: `/api/v1/policy/engines/${eng}/policies`,
    payload: { policy_body: '' },
  });
  t.equal(empty.statusCode, 422);
  t.match(empty.json().detail, [{ loc: ['body', 'policy_body'] }]);
  const nothing = await app.inject({ method: 'PUT', url: `/api/v1/policy/engines/${eng}/policies/p`, payload: {} });
  t.equal(nothing.statusCode, 422, 'an update must change something');
});

t.test('generations answer 501 on noop, naming the capability and how to choose another provider', async (t) => {
  const app = await makeApp(t);
  const eng = (await app.inject({ method: 'POST', url: '/api/v1/policy/engines', payload: { name: 'x' } })).json()
    .engine_id as string;
  for (const [method, url] of [
    ['POST', `/api/v1/policy/engines/${eng}/generations`],
    ['GET', `/api/v1/policy/engines/${eng}/generations`],
    ['GET', `/api/v1/policy/engines/${eng}/generations/g1`],
    ['GET', `/api/v1/policy/engines/${eng}/generations/g1/assets`],
  ] as const) {
    const res = await app.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) });
    t.equal(res.statusCode, 501, `${method} ${url}`);
    t.equal(res.json().code, 'SB_ERR_CAPABILITY_MISSING');
    t.match(
      res.json().detail,
      /policy provider 'noop'.*policy generation.*capability 'generations'.*X-Provider-Policy/,
    );
  }
});

t.test('create, update and delete need an admin; reads do not', async (t) => {
  const app = await makeApp(t, apiKeyUsers(users));
  const anon = await app.inject({ method: 'GET', url: '/api/v1/policy/engines' });
  t.equal(anon.statusCode, 401, 'authentication required');

  const denied = await app.inject({
    method: 'POST',
    url: '/api/v1/policy/engines',
    headers: user,
    payload: { name: 'x' },
  });
  t.equal(denied.statusCode, 403);
  t.equal(denied.json().code, 'SB_ERR_POLICY_ADMIN_REQUIRED');
  t.match(denied.json().detail, /admin/);

  const eng = await app.inject({
    method: 'POST',
    url: '/api/v1/policy/engines',
    headers: admin,
    payload: { name: 'x' },
  });
  t.equal(eng.statusCode, 201);
  const eid = eng.json().engine_id as string;
  const pol = await app.inject({
    method: 'POST',
    url: `/api/v1/policy/engines/${eid}/policies`,
    headers: admin,
    payload: { policy_body: BODY },
  });
  const pid = pol.json().policy_id as string;

  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/policy/engines', headers: user })).statusCode,
    200,
    'users read engines',
  );
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${eid}/policies/${pid}`, headers: user }))
      .statusCode,
    200,
    'users read policies',
  );
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/policy/enforcement', headers: user })).statusCode, 200);

  const writes: Array<[string, string, unknown?]> = [
    ['POST', `/api/v1/policy/engines/${eid}/policies`, { policy_body: BODY }],
    ['PUT', `/api/v1/policy/engines/${eid}/policies/${pid}`, { description: 'y' }],
    ['DELETE', `/api/v1/policy/engines/${eid}/policies/${pid}`],
    ['DELETE', `/api/v1/policy/engines/${eid}`],
  ];
  for (const [method, url, payload] of writes) {
    const res = await app.inject({ method: method as 'GET', url, headers: user, payload: payload as object });
    t.equal(res.statusCode, 403, `non-admin ${method} ${url}`);
    t.equal(res.json().code, 'SB_ERR_POLICY_ADMIN_REQUIRED');
  }
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${eid}/policies/${pid}`, headers: admin })).json()
      .description,
    '',
    'the refused update changed nothing',
  );
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/api/v1/policy/engines/${eid}`, headers: admin })).statusCode,
    204,
    'admins delete',
  );
});

t.test('openapi documents the policy routes', async (t) => {
  const app = await makeApp(t);
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  for (const path of [
    '/api/v1/policy/enforcement',
    '/api/v1/policy/engines/{engine_id}/policies/{policy_id}',
    '/api/v1/policy/engines/{engine_id}/generations/{generation_id}/assets',
  ]) {
    t.ok(doc.paths[path], `${path} documented`);
  }
});
