import t from 'tap';
import { openStore } from '../../core/store.ts';
import { makeApp } from '../helpers/app.ts';
import { asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { HealthHistory } from '../../plugins/registry/health/history.ts';
import { startControlledServer } from '../mcp/controlled-server.ts';

/**
 * GET /api/servers/{server}/health/history (issue 20): the last health results of a server, kept in the core
 * store, written on a change of status and otherwise at most once a minute; readable by whoever may read the server.
 */
t.test('health history: grows on change, not on repeats, and follows the server permission', async (t) => {
  const srv = await startControlledServer({
    tools: [{ name: 'echo', description: 'echo', inputSchema: { type: 'object', properties: {} } }],
  });
  t.teardown(() => srv.stop());
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 5 } } });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: { name: 'Hist', description: 'history test', path: '/hist', proxy_pass_url: srv.base },
  });
  t.equal(reg.statusCode, 201, reg.body);
  const history = async () => {
    const res = await app.inject({ url: '/api/servers/hist/health/history', headers: admin });
    t.equal(res.statusCode, 200, res.body);
    return res.json() as {
      path: string;
      limit: number;
      samples: Array<{ status: string; checked_at: string; latency_ms?: number; detail?: string }>;
    };
  };
  const refresh = async () => {
    const r = await app.inject({ method: 'POST', url: '/api/servers/hist/refresh', headers: admin });
    t.equal(r.statusCode, 200, r.body);
    return r.json().health_status as string;
  };
  // The check a new server gets at once lands in the history (healthy).
  for (let i = 0; i < 200 && (await history()).samples.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  const first = await history();
  t.equal(first.path, '/hist');
  t.equal(first.limit, 50);
  t.equal(first.samples.length, 1, 'the first check is recorded');
  t.equal(first.samples[0].status, 'healthy');
  t.type(first.samples[0].latency_ms, 'number', 'a probed result carries its latency');

  // Same status again within the minute: not written.
  t.equal(await refresh(), 'healthy');
  t.equal((await history()).samples.length, 1, 'an unchanged status within a minute adds nothing');

  // The backend fails: a change, recorded newest first with its detail.
  srv.behaviour.failStatus = 500;
  const failed = await refresh();
  t.match(failed, /^unhealthy/);
  const h2 = await history();
  t.equal(h2.samples.length, 2, 'a change is recorded');
  t.equal(h2.samples[0].status, failed, 'newest first');
  t.ok(h2.samples[0].detail && h2.samples[0].detail.length > 0, 'an unhealthy sample says why');
  t.ok(Date.parse(h2.samples[0].checked_at) >= Date.parse(h2.samples[1].checked_at));

  // Back to healthy: a third sample.
  srv.behaviour.failStatus = undefined;
  t.equal(await refresh(), 'healthy');
  t.same(
    (await history()).samples.map((s) => s.status),
    ['healthy', failed, 'healthy'],
  );

  // Permission: the same as reading the server.
  await withScope(app, {
    _id: 'hist-readers',
    server_access: [{ server: 'hist', methods: ['all'], tools: ['all'] }],
    ui_permissions: { list_service: ['/hist'] },
  });
  const granted = { authorization: `Bearer ${await mintToken(app, { username: 'gina', scopes: ['hist-readers'] })}` };
  t.equal((await app.inject({ url: '/api/servers/hist/health/history', headers: granted })).statusCode, 200);
  await withScope(app, { _id: 'hist-nothing', server_access: [], ui_permissions: {} });
  const other = { authorization: `Bearer ${await mintToken(app, { username: 'rita', scopes: ['hist-nothing'] })}` };
  t.equal(
    (await app.inject({ url: '/api/servers/hist', headers: other })).statusCode,
    403,
    'this caller cannot read the server itself',
  );
  const denied = await app.inject({ url: '/api/servers/hist/health/history', headers: other });
  t.equal(denied.statusCode, 403, 'a caller who cannot see the server cannot read its history');
  t.same(Object.keys(denied.json()).sort(), ['code', 'detail']);
  const anon = await app.inject({ url: '/api/servers/hist/health/history' });
  t.equal(anon.statusCode, 401);
  const missing = await app.inject({ url: '/api/servers/nope/health/history', headers: admin });
  t.equal(missing.statusCode, 404);
  t.same(Object.keys(missing.json()).sort(), ['code', 'detail']);

  // Removing the server removes its history: a new server at the path starts afresh.
  const del = await app.inject({ method: 'DELETE', url: '/api/servers/hist', headers: admin });
  t.ok(del.statusCode < 300, del.body);
  const reg2 = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: { name: 'Hist', description: 'history test', path: '/hist', proxy_pass_url: srv.base },
  });
  t.equal(reg2.statusCode, 201, reg2.body);
  for (let i = 0; i < 200 && (await history()).samples.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  t.equal((await history()).samples.length, 1, 'the old history went with the old server');
});

t.test('health history store rules: bounded, one sample a minute when unchanged, shared by replicas', async (t) => {
  const store = await openStore({ backend: 'memory' });
  t.teardown(() => store.close());
  const a = new HealthHistory(store, 50, 60_000);
  const base = Date.parse('2026-01-01T00:00:00Z');
  const iso = (ms: number) => new Date(base + ms).toISOString();
  // 70 changes: only the newest 50 are kept.
  for (let i = 0; i < 70; i++) await a.record('/s', i % 2 ? 'healthy' : 'unhealthy: refused', iso(i * 1000));
  const kept = await a.list('/s');
  t.equal(kept.length, 50, 'bounded at the limit');
  t.equal(kept[0].checked_at, iso(69_000), 'the newest is first');
  t.equal(kept[49].checked_at, iso(20_000), 'the oldest kept is the 21st');
  // Unchanged: one sample per minute.
  t.equal(await a.record('/t', 'healthy', iso(0)), true);
  t.equal(await a.record('/t', 'healthy', iso(30_000)), false, 'unchanged within the minute: skipped');
  t.equal(await a.record('/t', 'healthy', iso(60_000)), true, 'a minute later: sampled');
  // A second replica on the same store reads and extends the same history (and judges against it).
  const b = new HealthHistory(store, 50, 60_000);
  t.equal((await b.list('/t')).length, 2);
  t.equal(await b.record('/t', 'healthy', iso(70_000)), false, 'the other replica sees the recent sample');
  t.equal(await b.record('/t', 'unhealthy: HTTP 500', iso(75_000)), true);
  t.same(
    (await a.list('/t')).map((s) => s.status),
    ['unhealthy: HTTP 500', 'healthy', 'healthy'],
  );
  await a.forget('/t');
  t.same(await b.list('/t'), []);
});
