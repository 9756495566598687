import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeApp, tempDir } from '../helpers/app.ts';
import { adminBasic, asUser, mintToken } from '../helpers/registry-auth.ts';
import { buildApp } from '../../plugins/app.ts';
import {
  canAccessServer,
  hasPermission,
  requireAdmin,
  requirePermission,
  requireUser,
} from '../../plugins/registry/auth/access.ts';
import { registryAuthOf } from '../../plugins/registry/auth/index.ts';
import { openStore } from '../../core/store.ts';

t.test('scope files load into the scope store; /api/scopes, /api/auth/me, /api/debug/user-context', async (t) => {
  const app = await makeApp(t, { registry: { admin_password: 'pw-for-scope-tests' } });
  const ids = registryAuthOf(app)
    .scopes.list()
    .map((s) => s._id);
  t.ok(
    ids.includes('mcp-registry-admin') && ids.includes('mcp-registry-user') && ids.includes('mcp-servers-restricted'),
  );

  let res = await app.inject({ url: '/api/scopes', headers: await asUser(app, ['mcp-registry-admin']) });
  t.equal(res.statusCode, 200);
  t.equal(res.json().total, ids.length);
  res = await app.inject({ url: '/api/scopes', headers: await asUser(app, ['mcp-registry-user']) });
  t.same(
    res.json().scopes.map((s: { _id: string }) => s._id),
    ['mcp-registry-user'],
    'non-admins see their own scopes',
  );
  t.equal((await app.inject({ url: '/api/scopes' })).statusCode, 401);

  res = await app.inject({ url: '/api/auth/me', headers: await asUser(app, ['mcp-registry-admin'], 'ada') });
  t.same(res.json(), {
    username: 'ada',
    auth_method: 'self_signed',
    provider: 'local',
    scopes: ['mcp-registry-admin'],
    groups: [],
    can_modify_servers: true,
    is_admin: true,
    ui_permissions: res.json().ui_permissions,
    accessible_servers: ['all'],
    accessible_services: ['all'],
    accessible_agents: ['all'],
    token_kind: 'user',
  });
  t.same(res.json().ui_permissions.modify_service, ['all']);

  const rita = {
    authorization: `Bearer ${await mintToken(app, { username: 'rita', groups: ['mcp-servers-restricted'] })}`,
  };
  res = await app.inject({ url: '/api/auth/me', headers: rita });
  const me = res.json();
  t.equal(me.is_admin, false);
  t.equal(me.can_modify_servers, false);
  t.same(me.accessible_servers, ['currenttime']);
  t.same(me.accessible_services, ['/currenttime']);
  t.same(me.accessible_agents, ['/code-reviewer']);
  t.same(me.groups, ['mcp-servers-restricted']);

  res = await app.inject({ url: '/api/auth/me', headers: await asUser(app, ['mcp-registry-user']) });
  t.equal(res.json().is_admin, false);
  t.equal(res.json().can_modify_servers, false);
  t.equal((await app.inject({ url: '/api/auth/me' })).statusCode, 401);

  res = await app.inject({ url: '/api/debug/user-context', headers: rita });
  t.equal(res.statusCode, 200);
  t.same(res.json().server_access[0].tools, ['current_time_by_timezone']);
  t.same(res.json().agent_actions.get_agent, ['/code-reviewer']);

  // A bound token: /api/auth/me answers and shows the binding; admin powers are gone.
  const bound = await mintToken(app, {
    username: 'ada',
    scopes: ['mcp-registry-admin'],
    resource: { type: 'server', id: 'currenttime' },
  });
  res = await app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${bound}` } });
  t.equal(res.statusCode, 200);
  t.equal(res.json().is_admin, false);
  t.same(res.json().accessible_servers, ['currenttime']);
  t.same(res.json().resource, { type: 'server', id: 'currenttime' });
  t.equal(
    (await app.inject({ url: '/api/debug/user-context', headers: { authorization: `Bearer ${bound}` } })).statusCode,
    403,
  );
  t.equal((await app.inject({ url: '/api/scopes', headers: { authorization: `Bearer ${bound}` } })).statusCode, 403);
});

t.test('a restart reloads the files but keeps servers added to their groups through the API', async (t) => {
  const store = await openStore({ backend: 'memory' });
  const a = await makeApp(t, {}, { store });
  await registryAuthOf(a).scopes.addServerToGroups('/warehouse', ['mcp-registry-user']);
  await a.close();
  const b = await makeApp(t, {}, { store });
  const rules = registryAuthOf(b).scopes.get('mcp-registry-user')!.server_access;
  t.ok(
    rules.some((r) => 'server' in r && r.server === 'warehouse'),
    'API-added rule kept',
  );
  t.ok(
    rules.some((r) => 'server' in r && r.server === '*'),
    'file rules reloaded',
  );
  t.equal(rules.filter((r) => 'server' in r && r.server === 'warehouse').length, 1);
});

t.test('a broken scope file stops startup with its name', async (t) => {
  const dir = tempDir();
  mkdirSync(join(dir, 'scopes'));
  writeFileSync(
    join(dir, 'scopes', 'bad.json'),
    JSON.stringify({ _id: 'bad', group_mappings: 'not-a-list', server_access: [], ui_permissions: {} }),
  );
  const store = await openStore({ backend: 'memory' });
  await t.rejects(
    buildApp({
      config: { registry: { scopes_dir: join(dir, 'scopes') } },
      env: { DATA_DIR: dir },
      store,
      logLevel: 'silent',
    }),
    { code: 'SB_ERR_SCOPES_INVALID', message: /bad\.json/ },
  );
});

t.test('access functions', async (t) => {
  const app = await makeApp(t);
  const auth = registryAuthOf(app).authenticator;
  const ctx = (scopes: string[], extra = {}) =>
    auth.build({ username: 'u', groups: [], scopes, auth_method: 'self_signed', provider: 'local', ...extra });
  const admin = ctx(['mcp-registry-admin']);
  const user = ctx(['mcp-registry-user']);
  const rita = ctx(['mcp-servers-restricted']);
  t.ok(hasPermission(admin, 'register_service'));
  t.ok(hasPermission(admin, 'modify_service', '/anything'));
  t.notOk(hasPermission(user, 'register_service'));
  t.notOk(hasPermission(user, 'modify_service', '/x'));
  t.ok(hasPermission(user, 'list_service', '/x'));
  t.ok(hasPermission(rita, 'list_service', '/currenttime'));
  t.ok(hasPermission(rita, 'list_service', 'currenttime/'), 'slashes do not matter');
  t.notOk(hasPermission(rita, 'list_service', '/fininfo'));
  t.ok(hasPermission(rita, 'get_agent', '/code-reviewer'));
  t.notOk(hasPermission(rita, 'get_agent', '/other'));
  t.notOk(hasPermission(undefined, 'list_service'));
  t.ok(canAccessServer(rita, '/currenttime', 'tools/call', 'current_time_by_timezone'));
  t.notOk(canAccessServer(rita, '/currenttime', 'tools/call', 'other_tool'));
  t.notOk(canAccessServer(rita, '/currenttime', 'prompts/list'));
  t.notOk(canAccessServer(rita, 'fininfo'));
  t.ok(canAccessServer(user, 'any', 'tools/list'));
  t.notOk(canAccessServer(user, 'any', 'tools/call', 'x'));
  t.ok(canAccessServer(admin, 'any', 'tools/call', 'x'));
  const bound = ctx(['mcp-registry-admin'], {
    resource: { type: 'server', id: 'currenttime' },
    token_kind: 'resource',
  });
  t.ok(canAccessServer(bound, '/currenttime/', 'tools/call', 'x'));
  t.notOk(canAccessServer(bound, 'fininfo', 'tools/list'));
  t.ok(hasPermission(bound, 'modify_service', '/currenttime'));
  t.notOk(hasPermission(bound, 'modify_service', '/fininfo'));
  const agentBound = ctx(['mcp-registry-admin'], { resource: { type: 'agent', id: 'a1' }, token_kind: 'resource' });
  t.notOk(canAccessServer(agentBound, 'a1', 'tools/list'), 'agent-bound tokens reach no server');
  t.throws(() => requireUser(undefined), { name: 'SwitchboardError', statusCode: 401 });
  t.equal(requireUser(user), user);
  t.throws(() => requirePermission(user, 'register_service'), { statusCode: 403, code: 'SB_ERR_AUTH_FORBIDDEN' });
  t.equal(requirePermission(admin, 'register_service', '/x'), admin);
  t.throws(() => requireAdmin(user), { name: 'SwitchboardError', statusCode: 403 });
  t.throws(() => requireAdmin(bound), { name: 'SwitchboardError', statusCode: 403 }, 'bound tokens are never admin');
  t.throws(() => requireAdmin(undefined), { name: 'SwitchboardError', statusCode: 401 });
  t.equal(requireAdmin(admin), admin);
  // "Admin" per the reference: any register_/modify_/toggle_/delete_/publish_ permission on all.
  await registryAuthOf(app).scopes.put({
    _id: 'publishers',
    group_mappings: [],
    server_access: [],
    ui_permissions: { publish_agent: ['all'] },
  });
  t.equal(ctx(['publishers']).is_admin, true);
  await registryAuthOf(app).scopes.put({
    _id: 'one-toggler',
    group_mappings: [],
    server_access: [],
    ui_permissions: { toggle_service: ['/x'] },
  });
  t.equal(ctx(['one-toggler']).is_admin, false);
});

t.test('groups over HTTP Basic', async (t) => {
  const app = await makeApp(t, { registry: { admin_password: 'groups-admin-pw' } });
  const basic = adminBasic(app);
  const post = (url: string, payload: string, headers: Record<string, string> = basic) =>
    app.inject({
      method: 'POST',
      url,
      payload,
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    });

  t.test('only HTTP Basic with the admin credentials', async (t) => {
    for (const headers of [
      {},
      await asUser(app, ['mcp-registry-admin']),
      { authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` },
    ]) {
      const res = await app.inject({ url: '/api/internal/list-groups', headers });
      t.equal(res.statusCode, 401);
      t.match(res.headers['www-authenticate'], /^Basic realm=/);
    }
    t.equal((await post('/api/internal/create-group', 'group_name=x', {})).statusCode, 401);
    t.equal(
      (await post('/api/internal/delete-group', 'group_name=x', await asUser(app, ['mcp-registry-admin']))).statusCode,
      401,
    );
  });

  t.test('create, list, grant, delete', async (t) => {
    let res = await post('/api/internal/create-group', 'group_name=data-team&description=Data%20people');
    t.equal(res.statusCode, 201);
    t.equal(res.json().group.name, 'data-team');
    t.equal((await post('/api/internal/create-group', 'group_name=data-team')).statusCode, 409);
    t.equal((await post('/api/internal/create-group', 'group_name=bad name')).statusCode, 422);
    t.equal((await post('/api/internal/create-group', 'description=no-name')).statusCode, 422);

    res = await app.inject({ url: '/api/internal/list-groups', headers: basic });
    t.equal(res.statusCode, 200);
    const names = res.json().groups.map((g: { name: string }) => g.name);
    t.ok(names.includes('data-team'));
    t.ok(names.includes('mcp-registry-admin'), 'groups from scope mappings');
    t.ok(names.includes('5f0c3a9e-2b1d-4c7e-9a8f-1e2d3c4b5a69'), 'GUID mappings too');
    const dt = res.json().groups.find((g: { name: string }) => g.name === 'data-team');
    t.same(
      { system: dt.system, has_scope: dt.has_scope, description: dt.description },
      { system: false, has_scope: true, description: 'Data people' },
    );
    res = await app.inject({ url: '/api/internal/list-groups?include_scopes=false', headers: basic });
    t.same(
      res.json().groups.map((g: { name: string }) => g.name),
      ['data-team'],
    );

    // The group's members get what the group is given.
    const member = {
      authorization: `Bearer ${await mintToken(app, { username: 'dan', groups: ['data-team'], scopes: ['data-team'] })}`,
    };
    const v = () =>
      app.inject({
        url: '/validate',
        headers: {
          ...member,
          'x-original-url': '/warehouse/mcp',
          'x-body': '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        },
      });
    t.equal((await v()).statusCode, 403);
    t.same(await registryAuthOf(app).scopes.addServerToGroups('/warehouse', ['data-team', 'nope']), ['nope']);
    t.equal((await v()).statusCode, 200);

    t.equal(
      (await post('/api/internal/delete-group', 'group_name=data-team')).statusCode,
      409,
      'still grants a server',
    );
    await registryAuthOf(app).scopes.removeServerFromGroups('warehouse', ['data-team']);
    t.equal((await v()).statusCode, 403);
    await registryAuthOf(app).scopes.addServerToGroups('warehouse', ['data-team']);
    res = await post('/api/internal/delete-group', 'group_name=data-team&force=true');
    t.equal(res.statusCode, 200);
    t.equal((await v()).statusCode, 403, 'gone with the group');
    t.equal((await post('/api/internal/delete-group', 'group_name=data-team')).statusCode, 404);
  });

  t.test('system groups cannot be deleted', async (t) => {
    for (const g of ['mcp-registry-admin', 'mcp-registry-user', '5f0c3a9e-2b1d-4c7e-9a8f-1e2d3c4b5a69']) {
      const res = await post('/api/internal/delete-group', `group_name=${g}&force=true`);
      t.equal(res.statusCode, 403, g);
      t.equal(res.json().code, 'SB_ERR_GROUP_SYSTEM');
    }
    t.ok(registryAuthOf(app).scopes.has('mcp-registry-admin'));
  });
});

t.test(
  'a periodic reload that finds nothing new keeps cached token contexts valid; a change invalidates them',
  async (t) => {
    const app = await makeApp(t);
    const { scopes, authenticator } = registryAuthOf(app);
    const token = await mintToken(app, { username: 'kim', scopes: ['mcp-registry-user'] });
    const headers = { authorization: `Bearer ${token}` };
    t.equal((await app.inject({ url: '/api/auth/me', headers })).statusCode, 200);
    const cached = authenticator.identifyCached(headers);
    t.ok(cached?.user, 'the verified token is cached');
    const before = scopes.version;
    await scopes.reload();
    t.equal(scopes.version, before, 'nothing changed: same version');
    t.equal(authenticator.identifyCached(headers)?.user, cached!.user, 'the cached context is still served');
    await scopes.put({ ...scopes.get('mcp-registry-user')!, description: 'changed' });
    t.ok(scopes.version > before, 'a change bumps the version');
    t.equal(authenticator.identifyCached(headers), undefined, 'and the cached context is rebuilt on next use');
  },
);
