import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { registerServer } from '../helpers/registry-servers.ts';
import { adminBasic, asUser } from '../helpers/registry-auth.ts';
import { startControlledServer, type ToolSpec } from '../mcp/controlled-server.ts';

const ADD: ToolSpec = {
  name: 'add',
  description: 'Add two numbers',
  inputSchema: { type: 'object', properties: { a: { type: 'number' } } },
};

async function setup(t: Test, health: Record<string, unknown>) {
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 10, ...health } } });
  return { app, admin: await asUser(app, ['mcp-registry-admin'], 'alice') };
}

async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 15000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const server = async (app: FastifyInstance, admin: Record<string, string>, path: string) =>
  (await app.inject({ method: 'GET', url: `/api/servers${path}`, headers: admin })).json();

t.test('enabled servers are checked periodically at interval_seconds; disabled ones are not probed', async (t) => {
  const srv = await startControlledServer({ tools: [ADD] });
  t.teardown(() => srv.stop());
  const off = await startControlledServer({ tools: [ADD] });
  t.teardown(() => off.stop());
  const { app, admin } = await setup(t, { interval_seconds: 0.2 });
  await registerServer(t, app, admin, { name: 'Ticking', path: '/ticking', proxy_pass_url: srv.base });
  await registerServer(t, app, admin, { name: 'Off', path: '/off', proxy_pass_url: off.base });
  await until('first check of /off', async () => (await server(app, admin, '/off')).last_checked_iso !== null);
  await app.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: admin,
    payload: { path: '/off', new_state: false },
  });
  const offProbes = off.initializeCount();

  // No refresh is sent: only the timer can produce these probes.
  await until('three periodic probes', () => srv.initializeCount() >= 4);
  const first = (await server(app, admin, '/ticking')).last_checked_iso;
  await until('a later check', async () => (await server(app, admin, '/ticking')).last_checked_iso !== first);
  t.equal((await server(app, admin, '/ticking')).health_status, 'healthy');
  t.equal(off.initializeCount(), offProbes, 'the disabled server was never probed by the sweeps');
  t.equal((await server(app, admin, '/off')).health_status, 'disabled');
});

t.test('interval_seconds 0 turns the periodic sweep off', async (t) => {
  const srv = await startControlledServer({ tools: [ADD] });
  t.teardown(() => srv.stop());
  const { app, admin } = await setup(t, { interval_seconds: 0 });
  await registerServer(t, app, admin, { name: 'Quiet', path: '/quiet', proxy_pass_url: srv.base });
  await until('the check at registration', () => srv.initializeCount() === 1);
  // A positive test of absence needs some wait; the same wait saw several probes at 0.2 s above.
  await new Promise((r) => setTimeout(r, 1000));
  t.equal(srv.initializeCount(), 1, 'only the check a new server gets at once');
});

t.test('concurrency bounds the probes in flight, across a sweep and the checks of new servers', async (t) => {
  const srv = await startControlledServer({ tools: [ADD], initDelayMs: 400 });
  t.teardown(() => srv.stop());
  const { app, admin } = await setup(t, { concurrency: 3 });
  // Registered all at once: each new server is checked at once, all through the same three slots.
  await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      registerServer(t, app, admin, { name: `S${i}`, path: `/s${i}`, proxy_pass_url: `${srv.base}/s${i}` }),
    ),
  );
  await until('the checks of the new servers', async () => {
    const all = (await app.inject({ method: 'GET', url: '/api/servers/health', headers: admin })).json()
      .servers as Record<string, { last_checked_iso: string | null }>;
    return Object.values(all).filter((e) => e.last_checked_iso).length === 10;
  });
  t.equal(srv.initializeCount(), 10, 'one check per new server');
  const sweep = await app.inject({ method: 'POST', url: '/api/internal/healthcheck', headers: adminBasic(app) });
  t.equal(sweep.statusCode, 200, sweep.body);
  t.equal(Object.keys(sweep.json()).length, 10, 'every server checked');
  t.ok(Object.values(sweep.json() as Record<string, { status: string }>).every((e) => e.status === 'healthy'));
  t.equal(srv.initializeCount(), 20, 'and one per server in the sweep');
  t.equal(srv.maxInFlight(), 3, 'never more than `concurrency` probes in flight, and the sweep did use them all');
});

t.test('no overlapping checks of one server: periodic sweep plus a burst of refreshes', async (t) => {
  const srv = await startControlledServer({ tools: [ADD] });
  t.teardown(() => srv.stop());
  const { app, admin } = await setup(t, { interval_seconds: 0.2, concurrency: 10 });
  await registerServer(t, app, admin, { name: 'Slow', path: '/slow', proxy_pass_url: srv.base });
  await until('first check', async () => (await server(app, admin, '/slow')).last_checked_iso !== null);
  srv.behaviour.initDelayMs = 600;
  await until('a periodic check in flight', () => srv.inFlight() === 1);
  const refreshes = [];
  for (let i = 0; i < 12; i++) {
    refreshes.push(
      app.inject({ method: 'POST', url: i % 2 ? '/api/refresh/slow' : '/api/servers/slow/refresh', headers: admin }),
    );
    await new Promise((r) => setTimeout(r, 100));
  }
  const answers = await Promise.all(refreshes);
  t.ok(
    answers.every((a) => a.statusCode === 200 && a.json().health_status === 'healthy'),
    'every refresh answered with a result',
  );
  t.equal(srv.maxInFlight(), 1, 'one check of the server at a time');
  t.ok(srv.initializeCount() < 1 + 12, 'refreshes joined running checks instead of starting their own');
});

t.test('a refresh after a credential update does not reuse the check of the old credential', async (t) => {
  const srv = await startControlledServer({
    tools: [ADD],
    auth: { header: 'authorization', value: 'Bearer old', status: 401 },
  });
  t.teardown(() => srv.stop());
  const { app, admin } = await setup(t, {});
  await registerServer(t, app, admin, {
    name: 'Rotating',
    path: '/rotating',
    proxy_pass_url: srv.base,
    auth_scheme: 'bearer',
    auth_credential: 'old',
  });
  await until('first check', async () => (await server(app, admin, '/rotating')).health_status === 'healthy');

  srv.behaviour.initDelayMs = 500;
  const running = app.inject({ method: 'POST', url: '/api/servers/rotating/refresh', headers: admin });
  await until('the old-credential check in flight', () => srv.inFlight() === 1);
  // The backend rotates while that check runs, and the operator stores the new credential.
  srv.behaviour.auth = { header: 'authorization', value: 'Bearer new', status: 401 };
  const upd = await app.inject({
    method: 'PATCH',
    url: '/api/servers/rotating/auth-credential',
    headers: admin,
    payload: { auth_scheme: 'bearer', auth_credential: 'new' },
  });
  t.equal(upd.statusCode, 200, upd.body);
  const after = await app.inject({ method: 'POST', url: '/api/servers/rotating/refresh', headers: admin });
  t.equal((await running).json().health_status, 'auth-expired', 'the check that started with the old credential');
  t.equal(after.json().health_status, 'healthy', 'the refresh checked the record as updated');
  t.equal(srv.maxInFlight(), 1, 'still one check at a time: the new one waited');
  const lastOld = srv.seen.map((r) => r.headers.authorization).lastIndexOf('Bearer old');
  const firstNew = srv.seen.findIndex((r) => r.headers.authorization === 'Bearer new');
  t.ok(firstNew > lastOld, 'the new check started after the old one ended');
});

t.test('a refresh is never overwritten by an older sweep result still waiting to be written', async (t) => {
  const srv = await startControlledServer({
    tools: [ADD],
    auth: { header: 'authorization', value: 'Bearer old', status: 401 },
  });
  const slow = await startControlledServer({ tools: [ADD] });
  t.teardown(() => Promise.all([srv.stop(), slow.stop()]));
  const { app, admin } = await setup(t, {});
  await registerServer(t, app, admin, {
    name: 'Rotating',
    path: '/a-rotating',
    proxy_pass_url: srv.base,
    auth_scheme: 'bearer',
    auth_credential: 'old',
  });
  await registerServer(t, app, admin, { name: 'Slow', path: '/b-slow', proxy_pass_url: slow.base });
  await until(
    'first checks',
    async () =>
      (await server(app, admin, '/a-rotating')).health_status === 'healthy' &&
      (await server(app, admin, '/b-slow')).health_status === 'healthy',
  );

  // The backend rotates; a sweep finds the stale credential, and its result waits in the sweep's write batch (the slow server keeps the sweep open).
  srv.behaviour.auth = { header: 'authorization', value: 'Bearer new', status: 401 };
  slow.behaviour.initDelayMs = 1500;
  const refused = srv.seen.length;
  const sweep = app.inject({ method: 'POST', url: '/api/internal/healthcheck', headers: adminBasic(app) });
  await until('the sweep probed the stale credential', () =>
    srv.seen.slice(refused).some((r) => r.headers.authorization === 'Bearer old'),
  );
  const upd = await app.inject({
    method: 'PATCH',
    url: '/api/servers/a-rotating/auth-credential',
    headers: admin,
    payload: { auth_scheme: 'bearer', auth_credential: 'new' },
  });
  t.equal(upd.statusCode, 200, upd.body);
  const refreshed = await app.inject({ method: 'POST', url: '/api/servers/a-rotating/refresh', headers: admin });
  t.equal(refreshed.json().health_status, 'healthy', 'the refresh checked the new credential');
  t.equal((await sweep).json()['/a-rotating'].status, 'auth-expired', 'the sweep reports what it found');
  t.equal((await server(app, admin, '/a-rotating')).health_status, 'healthy', 'the newer result is the one stored');
});
