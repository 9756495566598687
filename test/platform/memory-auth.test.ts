import t from 'tap';
import { apiKeyUsers, keyHeader, type KeyUser } from '../fixtures/api-key-users.ts';
import { caller, makeApp } from '../helpers/app.ts';
import { startOidcServer } from '../oidc/server.ts';

/**
 * User-scoped namespaces (`user:<principal id>` and `user:<principal id>:<anything>`)
 * with the real auth backends: the owner and admins get in, everyone else gets 403.
 */
const USERS: Record<string, KeyUser> = {
  alice: { groups: ['research'] },
  bob: { groups: ['sales'] },
  ops: { admin: true },
};
const alice = keyHeader('alice');
const bob = keyHeader('bob');
const admin = keyHeader('ops');

t.test('api_key: user namespaces belong to their user', async (t) => {
  const app = await makeApp(t, apiKeyUsers(USERS));
  const as = caller(t, app);

  await as(alice).post('/api/v1/memory/user:alice', { key: 'diary', content: 'dear diary' }, 201);
  await as(alice).post('/api/v1/memory/user:alice:work', { key: 'todo', content: 'ship it' }, 201);
  await as(alice).get('/api/v1/memory/user:alice/diary', 200);

  for (const [method, url, payload] of [
    ['GET', '/api/v1/memory/user:alice/diary'],
    ['GET', '/api/v1/memory/user:alice'],
    ['GET', '/api/v1/memory/user:alice:work/todo'],
    ['POST', '/api/v1/memory/user:alice/search', { query: 'diary' }],
    ['POST', '/api/v1/memory/user:alice', { key: 'x', content: 'planted' }],
    ['DELETE', '/api/v1/memory/user:alice/diary'],
  ] as Array<['GET' | 'POST' | 'DELETE', string, Record<string, unknown>?]>) {
    const res = await app.inject({ method, url, headers: bob, ...(payload ? { payload } : {}) });
    t.equal(res.statusCode, 403, `bob: ${method} ${url}`);
  }
  t.equal(
    (await app.inject({ url: '/api/v1/memory/user:alice/diary', headers: alice })).json().content,
    'dear diary',
    "bob's refused writes changed nothing",
  );
  await as(admin).get('/api/v1/memory/user:alice/diary', 200, 'admins read every namespace');
  await as(alice).get(
    '/api/v1/memory/user:alicex/diary',
    403,
    "a namespace of another id that starts the same is not alice's",
  );

  const seen = (await app.inject({ url: '/api/v1/memory/namespaces', headers: bob })).json().namespaces;
  t.notOk(
    seen.some((n: string) => n.startsWith('user:alice')),
    "bob does not see alice's namespaces listed",
  );
  await as(bob).post(
    '/api/v1/memory/team-notes',
    { key: 'k', content: 'shared' },
    201,
    'other namespaces are open to every authenticated caller',
  );
  await as().get('/api/v1/memory/team-notes/k', 401, 'but not to anonymous callers');
});

t.test('jwt: the token subject owns its user namespace', async (t) => {
  const idp = await startOidcServer({
    clients: { carol: { secret: 'carol-secret' }, dave: { secret: 'dave-secret' } },
  });
  t.teardown(() => idp.close());
  const app = await makeApp(t, {
    providers: {
      auth: {
        default: 'oidc',
        instances: { oidc: { type: 'jwt', options: { issuer: idp.issuer, audience: 'switchboard' } } },
      },
    },
  });
  const as = caller(t, app);
  const carol = { authorization: `Bearer ${await idp.token('carol')}` };
  const dave = { authorization: `Bearer ${await idp.token('dave')}` };
  await as(carol).post('/api/v1/memory/user:carol', { key: 'k', content: 'mine' }, 201);
  await as(carol).get('/api/v1/memory/user:carol/k', 200);
  await as(dave).get('/api/v1/memory/user:carol/k', 403);
});

t.test('conversations belong to their actor; a service principal is not an admin', async (t) => {
  const app = await makeApp(t, apiKeyUsers({ ...USERS, robot: { type: 'service' } }));
  const as = caller(t, app);
  const robot = keyHeader('robot');
  await as(alice).post(
    '/api/v1/memory/sessions/alice/s1/events',
    { messages: [{ role: 'user', text: 'secret plan' }] },
    201,
  );
  await as(alice).get('/api/v1/memory/sessions/alice/s1/events', 200);
  await as(robot).get(
    '/api/v1/memory/sessions/alice/s1/events',
    403,
    "a service key does not read others' conversations",
  );
  await as(robot).get('/api/v1/memory/actors/alice/sessions', 403);
  t.same(
    (await app.inject({ url: '/api/v1/memory/actors', headers: robot })).json().actors,
    [],
    'nor list their actors',
  );
  await as(admin).get('/api/v1/memory/sessions/alice/s1/turns', 200, 'an admin does');
  t.same((await app.inject({ url: '/api/v1/memory/actors', headers: admin })).json().actors, [{ actor_id: 'alice' }]);
});

t.test('group namespaces belong to the members of the group', async (t) => {
  const app = await makeApp(t, apiKeyUsers({ ...USERS, carol: { groups: ['research'] } }));
  const as = caller(t, app);
  const carol = keyHeader('carol');
  await as(alice).post('/api/v1/memory/group:research', { key: 'paper', content: 'draft 1' }, 201);
  t.equal(
    (await app.inject({ url: '/api/v1/memory/group:research/paper', headers: carol })).json().content,
    'draft 1',
    'another member reads it',
  );
  const denied = await app.inject({ url: '/api/v1/memory/group:research/paper', headers: bob });
  t.equal(denied.statusCode, 403, 'a non-member does not');
  t.match(denied.json().detail, /members of group 'research'/);
  await as(bob).post('/api/v1/memory/group:research:notes', { key: 'k', content: 'x' }, 403);
  t.same(
    (await app.inject({ url: '/api/v1/memory/namespaces', headers: bob })).json().namespaces,
    [],
    'nor sees it listed',
  );
  t.same((await app.inject({ url: '/api/v1/memory/namespaces', headers: carol })).json().namespaces, [
    'group:research',
  ]);
});
