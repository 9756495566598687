import t from 'tap';
import { apiKeyUsers, keyHeader as as } from '../fixtures/api-key-users.ts';
import { makeApp } from '../helpers/app.ts';

// Teams are shared by group: alice is in eng, bob in ops, root is an admin.
const users = { alice: { groups: ['eng'] }, bob: { groups: ['ops'] }, root: { admin: true } };
const TEAM = {
  name: 'research',
  description: 'finds things',
  planner: 'planner',
  synthesizer: 'writer',
  workers: ['searcher', 'reader'],
};

t.test('noop mode: team CRUD with defaults, 409 on duplicates, stored in the core store', async (t) => {
  const app = await makeApp(t);
  const created = await app.inject({ method: 'POST', url: '/api/v1/teams', payload: TEAM });
  t.equal(created.statusCode, 201);
  t.match(created.json(), {
    ...TEAM,
    global_max_turns: 100,
    global_timeout_seconds: 600,
    shared_memory_namespace: null,
    shared_with: [],
    owner_id: 'noop',
    created_at: /T/,
  });
  t.match(
    await app.sb.store.collection('teams').get('research'),
    { name: 'research', owner_id: 'noop' },
    'the spec lives in the core store',
  );

  const dup = await app.inject({ method: 'POST', url: '/api/v1/teams', payload: TEAM });
  t.equal(dup.statusCode, 409);
  t.equal(dup.json().code, 'SB_ERR_TEAM_EXISTS');

  await app.inject({
    method: 'POST',
    url: '/api/v1/teams',
    payload: {
      ...TEAM,
      name: 'alpha',
      shared_memory_namespace: 'team:{team_name}',
      global_max_turns: 7,
      global_timeout_seconds: 30,
    },
  });
  const list = (await app.inject({ method: 'GET', url: '/api/v1/teams' })).json();
  t.equal(list.total, 2);
  t.same(
    list.teams.map((x: { name: string }) => x.name),
    ['alpha', 'research'],
    'sorted by name',
  );
  t.match((await app.inject({ method: 'GET', url: '/api/v1/teams/alpha' })).json(), {
    shared_memory_namespace: 'team:{team_name}',
    global_max_turns: 7,
    global_timeout_seconds: 30,
  });

  const upd = await app.inject({
    method: 'PUT',
    url: '/api/v1/teams/research',
    payload: { workers: ['searcher'], global_max_turns: 50 },
  });
  t.equal(upd.statusCode, 200);
  t.match(upd.json(), {
    name: 'research',
    planner: 'planner',
    workers: ['searcher'],
    global_max_turns: 50,
    global_timeout_seconds: 600,
    created_at: created.json().created_at,
  });
  t.same((await app.inject({ method: 'GET', url: '/api/v1/teams/research' })).json(), upd.json(), 'update persisted');

  const del = await app.inject({ method: 'DELETE', url: '/api/v1/teams/research' });
  t.same(del.json(), { status: 'deleted', deleted: true, name: 'research' });
  for (const [method, payload] of [['GET'], ['PUT', { description: 'x' }], ['DELETE']] as const) {
    const res = await app.inject({ method, url: '/api/v1/teams/research', payload });
    t.equal(res.statusCode, 404, `${method} deleted team`);
    t.equal(res.json().code, 'SB_ERR_TEAM_NOT_FOUND');
  }
});

t.test('validation: member names non-empty, limits positive integers', async (t) => {
  const app = await makeApp(t);
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['no planner', { ...TEAM, planner: undefined }, 'planner'],
    ['empty planner', { ...TEAM, planner: '' }, 'planner'],
    ['empty synthesizer', { ...TEAM, synthesizer: '' }, 'synthesizer'],
    ['no workers', { ...TEAM, workers: [] }, 'workers'],
    ['blank worker name', { ...TEAM, workers: ['a', ''] }, 'workers'],
    ['duplicate workers', { ...TEAM, workers: ['a', 'a'] }, 'workers'],
    ['zero turns', { ...TEAM, global_max_turns: 0 }, 'global_max_turns'],
    ['fractional turns', { ...TEAM, global_max_turns: 1.5 }, 'global_max_turns'],
    ['negative timeout', { ...TEAM, global_timeout_seconds: -5 }, 'global_timeout_seconds'],
    ['bad team name', { ...TEAM, name: 'has space' }, 'name'],
    ['unknown field', { ...TEAM, planer: 'typo' }, 'planer'],
  ];
  for (const [what, payload, field] of bad) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/teams', payload });
    t.equal(res.statusCode, 422, what);
    t.ok(
      (res.json().detail as Array<{ loc: Array<string | number> }>).some((d) => d.loc.includes(field)),
      `${what}: detail names ${field}`,
    );
  }
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/teams' })).json().total, 0, 'nothing was stored');
  await app.inject({ method: 'POST', url: '/api/v1/teams', payload: TEAM });
  const badUpdate = await app.inject({ method: 'PUT', url: '/api/v1/teams/research', payload: { workers: [] } });
  t.equal(badUpdate.statusCode, 422, 'updates are validated too');
  t.equal(
    (await app.inject({ method: 'PUT', url: '/api/v1/teams/research', payload: { global_timeout_seconds: 0 } }))
      .statusCode,
    422,
  );
});

t.test('owner_id and shared_with decide who may read and change a team', async (t) => {
  const app = await makeApp(t, apiKeyUsers(users));
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/teams' })).statusCode, 401, 'authentication on');
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/teams', headers: as('alice'), payload: TEAM })).json().owner_id,
    'alice',
  );
  await app.inject({
    method: 'POST',
    url: '/api/v1/teams',
    headers: as('alice'),
    payload: { ...TEAM, name: 'ops-shared', shared_with: ['ops'] },
  });
  await app.inject({
    method: 'POST',
    url: '/api/v1/teams',
    headers: as('alice'),
    payload: { ...TEAM, name: 'public', shared_with: ['*'] },
  });

  const bobList = (await app.inject({ method: 'GET', url: '/api/v1/teams', headers: as('bob') })).json();
  t.same(
    bobList.teams.map((x: { name: string }) => x.name),
    ['ops-shared', 'public'],
    'bob sees what is shared with his group or everyone',
  );
  const forbidden = await app.inject({ method: 'GET', url: '/api/v1/teams/research', headers: as('bob') });
  t.equal(forbidden.statusCode, 403);
  t.equal(forbidden.json().code, 'SB_ERR_TEAM_FORBIDDEN');
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/teams/ops-shared', headers: as('bob') })).statusCode,
    200,
    'group share grants use',
  );
  t.equal(
    (
      await app.inject({
        method: 'PUT',
        url: '/api/v1/teams/ops-shared',
        headers: as('bob'),
        payload: { description: 'mine now' },
      })
    ).statusCode,
    403,
    'but not change',
  );
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/teams/public', headers: as('bob') })).statusCode, 403);
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/teams/research/runs', headers: as('bob') })).statusCode,
    403,
    'run routes check the team first',
  );

  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/teams', headers: as('root') })).json().total,
    3,
    'admins see every team',
  );
  const adminEdit = await app.inject({
    method: 'PUT',
    url: '/api/v1/teams/research',
    headers: as('root'),
    payload: { description: 'by admin' },
  });
  t.equal(adminEdit.statusCode, 200);
  t.equal(adminEdit.json().owner_id, 'alice', 'an admin edit keeps the owner');
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/api/v1/teams/research', headers: as('alice') })).statusCode,
    200,
    'the owner deletes',
  );
});

t.test(
  'team runs: members that do not exist are 422 before anything starts; empty run list, 404 for any run id',
  async (t) => {
    const app = await makeApp(t);
    await app.inject({ method: 'POST', url: '/api/v1/teams', payload: TEAM });
    for (const url of ['/api/v1/teams/research/run', '/api/v1/teams/research/run/stream']) {
      const res = await app.inject({ method: 'POST', url, payload: { message: 'find papers' } });
      t.equal(res.statusCode, 422, url);
      t.equal(res.json().code, 'SB_ERR_TEAM_AGENT_MISSING');
      t.match(res.json().detail, new RegExp(`'${TEAM.planner}'.*do not exist`));
    }
    t.equal(
      (await app.inject({ method: 'POST', url: '/api/v1/teams/research/run', payload: {} })).statusCode,
      422,
      'the run request is validated',
    );

    const runs = await app.inject({ method: 'GET', url: '/api/v1/teams/research/runs' });
    t.equal(runs.statusCode, 200);
    t.same(runs.json(), { team_name: 'research', runs: [] });

    const byId: Array<[string, string]> = [
      ['GET', '/api/v1/teams/research/runs/r1'],
      ['GET', '/api/v1/teams/research/runs/r1/status'],
      ['GET', '/api/v1/teams/research/runs/r1/events'],
      ['GET', '/api/v1/teams/research/runs/r1/stream'],
      ['DELETE', '/api/v1/teams/research/runs/r1'],
      ['POST', '/api/v1/teams/research/runs/r1/tasks/t1/retry'],
    ];
    for (const [method, url] of byId) {
      const res = await app.inject({ method: method as 'GET', url });
      t.equal(res.statusCode, 404, `${method} ${url}`);
      t.equal(res.json().code, 'SB_ERR_TEAMS_RUN_NOT_FOUND');
    }
    const cancel = await app.inject({ method: 'DELETE', url: '/api/v1/teams/research/runs/r1/cancel' });
    t.equal(cancel.statusCode, 404);
    t.equal(cancel.json().code, 'SB_ERR_TEAMS_NO_ACTIVE_RUN');

    const noTeam = await app.inject({ method: 'POST', url: '/api/v1/teams/ghost/run', payload: { message: 'x' } });
    t.equal(noTeam.statusCode, 404, 'unknown team before anything else');
    t.equal(noTeam.json().code, 'SB_ERR_TEAM_NOT_FOUND');
    t.equal((await app.inject({ method: 'GET', url: '/api/v1/teams/ghost/runs' })).statusCode, 404);
  },
);

t.test('team export: a Python script for teams the caller may use', async (t) => {
  const app = await makeApp(t);
  await app.inject({ method: 'POST', url: '/api/v1/teams', payload: TEAM });
  const res = await app.inject({ method: 'GET', url: '/api/v1/teams/research/export' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/x-python/);
  t.match(res.body, /^#!\/usr\/bin\/env python3/);
  t.match(res.body, /\\"planner\\": \\"planner\\"/, 'the team spec is embedded');
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/teams/ghost/export' })).statusCode, 404);
});
