import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { registerServer } from '../helpers/registry-servers.ts';
import { asUser } from '../helpers/registry-auth.ts';
import { freePort } from '../fixtures/free-port.ts';
import { startControlledServer } from '../mcp/controlled-server.ts';

const ADD = { name: 'add', description: 'Add two numbers', inputSchema: { type: 'object' as const } };

// The periodic sweep is off in every test here: only the first-check retries can change a status.
async function setup(t: Test, health: Record<string, unknown>) {
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 2, ...health } } });
  return { app, admin: await asUser(app, ['mcp-registry-admin'], 'alice') };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const status = async (app: FastifyInstance, admin: Record<string, string>, path: string) =>
  (await app.inject({ method: 'GET', url: `/api/servers${path}`, headers: admin })).json() as {
    health_status: string;
    num_tools: number;
    last_checked_iso: string | null;
  };

t.test(
  'a server that starts listening after its registration turns healthy through the first-check retries',
  async (t) => {
    const port = await freePort();
    const { app, admin } = await setup(t, { first_check_retry_seconds: [0.3, 0.6, 1] });
    await registerServer(t, app, admin, { name: 'Late', path: '/late', proxy_pass_url: `http://127.0.0.1:${port}` });
    const first = await until('the first check', async () => {
      const s = await status(app, admin, '/late');
      return s.last_checked_iso ? s : undefined;
    });
    t.equal(first.health_status, 'unhealthy: connection error', 'nothing listened at the first check');

    const srv = await startControlledServer({ tools: [ADD] }, port);
    t.teardown(() => srv.stop());
    const healthy = await until('a retry that finds the server', async () => {
      const s = await status(app, admin, '/late');
      return s.health_status === 'healthy' ? s : undefined;
    });
    t.equal(healthy.num_tools, 1, 'tools discovered by the retry');
    t.ok(srv.initializeCount() >= 1, 'the retry probed the server');
  },
);

t.test('retries stop after the configured list, and a healthy first check schedules none', async (t) => {
  // A backend that answers 503 (as one still booting may): every probe is one `initialize` POST it records.
  const failing = await startControlledServer({ tools: [ADD], failStatus: 503 });
  t.teardown(() => failing.stop());
  const ok = await startControlledServer({ tools: [ADD] });
  t.teardown(() => ok.stop());
  const { app, admin } = await setup(t, { first_check_retry_seconds: [0.1, 0.1] });
  const probes = () => failing.seen.filter((r) => r.rpc === 'initialize').length;
  await registerServer(t, app, admin, { name: 'Failing', path: '/failing', proxy_pass_url: failing.base });
  await registerServer(t, app, admin, { name: 'Up', path: '/up', proxy_pass_url: ok.base });
  await until('the healthy first check', async () =>
    (await status(app, admin, '/up')).health_status === 'healthy' ? true : undefined,
  );
  await until('the first check and both retries', async () => (probes() >= 3 ? true : undefined));
  t.equal((await status(app, admin, '/failing')).health_status, 'unhealthy: status 503');

  // The backend recovers, but the retries are used up and the sweep is off: nothing may probe it again.
  failing.behaviour.failStatus = undefined;
  await new Promise((r) => setTimeout(r, 800));
  t.equal(probes(), 3, 'no probe after the first check and its two retries');
  t.equal((await status(app, admin, '/failing')).health_status, 'unhealthy: status 503');
  t.equal(ok.initializeCount(), 1, 'the server healthy at once was checked once, never retried');
});

t.test('first_check_retry_seconds is validated like every registry.health key', async (t) => {
  await t.rejects(
    makeApp(t, { registry: { health: { first_check_retry_seconds: [0] } } }),
    /registry\.health\.first_check_retry_seconds/,
  );
  await t.rejects(
    makeApp(t, { registry: { health: { first_check_retry_seconds: 'soon' } } }),
    /registry\.health\.first_check_retry_seconds/,
  );
});
