import t from 'tap';
import { apiKeyUsers, keyHeader as as, type KeyUser } from '../fixtures/api-key-users.ts';
import { makeApp } from '../helpers/app.ts';

// Real api_key auth: one key per user; carol is in group `research`, root is an admin.
const users: Record<string, KeyUser> = { alice: {}, bob: {}, carol: { groups: ['research'] }, root: { admin: true } };
const apiKeys = apiKeyUsers(users);

t.test('agent spec CRUD with defaults, 409, 422, partial update, delete', async (t) => {
  const app = await makeApp(t);
  const created = await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'helper', model: 'm1' } });
  t.equal(created.statusCode, 201, created.body);
  const spec = created.json();
  t.equal(spec.system_prompt, 'You are a helpful assistant.');
  t.equal(spec.max_turns, 20);
  t.equal(spec.temperature, 1.0);
  t.same(spec.hooks, { auto_memory: true, auto_trace: true });
  t.same(spec.provider_overrides, {});
  t.same(spec.primitives, {});
  t.same(spec.shared_with, []);
  t.equal(spec.owner_id, 'noop');

  const dup = await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'helper', model: 'm2' } });
  t.equal(dup.statusCode, 409);
  t.equal(dup.json().code, 'SB_ERR_AGENT_EXISTS');

  for (const bad of [
    { model: 'x' },
    { name: 'has space', model: 'x' },
    { name: 'a', model: 'x', max_turns: 0 },
    { name: 'a', model: 'x', primitives: { nope: { enabled: true } } },
    { name: 'a', model: 'x', provider_overrides: { bogus: 'y' } },
  ]) {
    const r = await app.inject({ method: 'POST', url: '/api/v1/agents', payload: bad });
    t.equal(r.statusCode, 422, `422 for ${JSON.stringify(bad)}: ${r.body}`);
    t.ok(Array.isArray(r.json().detail));
  }

  const upd = await app.inject({
    method: 'PUT',
    url: '/api/v1/agents/helper',
    payload: { max_turns: 3, hooks: { auto_trace: false } },
  });
  t.equal(upd.statusCode, 200, upd.body);
  t.equal(upd.json().max_turns, 3);
  t.equal(upd.json().model, 'm1', 'fields not in the patch are kept');
  t.same(upd.json().hooks, { auto_memory: true, auto_trace: false });

  const list = await app.inject({ url: '/api/v1/agents' });
  t.same(
    list.json().agents.map((a: { name: string }) => a.name),
    ['helper'],
  );
  t.equal((await app.inject({ url: '/api/v1/agents/helper' })).json().max_turns, 3);

  const deleted = await app.inject({ method: 'DELETE', url: '/api/v1/agents/helper' });
  t.equal(deleted.statusCode, 200);
  t.same(
    deleted.json(),
    { status: 'deleted', deleted: true, name: 'helper' },
    'the reference answer field beside ours',
  );
  t.equal((await app.inject({ url: '/api/v1/agents/helper' })).statusCode, 404);
  t.equal(
    (await app.inject({ method: 'PUT', url: '/api/v1/agents/helper', payload: { max_turns: 2 } })).statusCode,
    404,
  );
});

t.test('owner and shared_with: 403 for others, groups and * grant use, admins see all', async (t) => {
  const app = await makeApp(t, apiKeys);
  const mk = (name: string, shared_with: string[]) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: as('alice'),
      payload: { name, model: 'm', shared_with },
    });
  t.equal((await mk('private', [])).statusCode, 201);
  t.equal((await mk('team', ['research'])).statusCode, 201);
  t.equal((await mk('public', ['*'])).statusCode, 201);

  t.equal((await app.inject({ url: '/api/v1/agents/private' })).statusCode, 401, 'no credentials');
  const bob = await app.inject({ url: '/api/v1/agents/private', headers: as('bob') });
  t.equal(bob.statusCode, 403);
  t.equal(bob.json().code, 'SB_ERR_AGENT_FORBIDDEN');
  t.equal((await app.inject({ url: '/api/v1/agents/team', headers: as('bob') })).statusCode, 403);
  t.equal((await app.inject({ url: '/api/v1/agents/team', headers: as('carol') })).statusCode, 200);
  t.equal((await app.inject({ url: '/api/v1/agents/public', headers: as('bob') })).statusCode, 200);
  const names = (r: { json(): { agents: Array<{ name: string }> } }) => r.json().agents.map((a) => a.name);
  t.same(names(await app.inject({ url: '/api/v1/agents', headers: as('bob') })), ['public']);
  t.same(names(await app.inject({ url: '/api/v1/agents', headers: as('carol') })), ['public', 'team']);
  t.same(names(await app.inject({ url: '/api/v1/agents', headers: as('root') })), ['private', 'public', 'team']);

  t.equal(
    (await app.inject({ method: 'PUT', url: '/api/v1/agents/public', headers: as('bob'), payload: { max_turns: 1 } }))
      .statusCode,
    403,
    'sharing grants use, not change',
  );
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/agents/team', headers: as('carol') })).statusCode, 403);
  t.equal(
    (await app.inject({ method: 'PUT', url: '/api/v1/agents/private', headers: as('root'), payload: { max_turns: 1 } }))
      .statusCode,
    200,
    'admins may change',
  );
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/agents/private/chat',
        headers: as('bob'),
        payload: { message: 'hi' },
      })
    ).statusCode,
    403,
    'chat needs use access',
  );
});

t.test('provider_overrides: unknown names 400, locked primitives 403', async (t) => {
  const app = await makeApp(t, { providers: { auth: { locked: true } } });
  const unknown = await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: { name: 'a', model: 'm', provider_overrides: { memory: 'nope' } },
  });
  t.equal(unknown.statusCode, 400, unknown.body);
  t.match(unknown.json().detail, /Unknown memory provider 'nope'/);
  t.equal((await app.inject({ url: '/api/v1/agents/a' })).statusCode, 404, 'nothing stored');
});
