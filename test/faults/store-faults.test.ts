import t, { type Test } from 'tap';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../plugins/app.ts';
import { tempDir } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../core/discovery.ts';
import { startRedis, waitExit, type PrivateRedis } from '../fixtures/redis-server.ts';

/**
 * Switchboard on a private Redis that is frozen (SIGSTOP), killed, and
 * restarted empty at the same address. For every route family: while the
 * store is gone each request answers, before a generous deadline, either as it
 * did when all was well or with a 503 {detail, code} that names the store;
 * nothing else is a 5xx; and once Redis is back every family works again
 * without anyone restarting Switchboard. A hang is the bug this looks for, so
 * the only time bound is "answered at all"; nothing here measures speed.
 */

const ANSWER_DEADLINE_MS = 20_000;
const RECOVERY_DEADLINE_MS = 40_000;
const ADMIN_PASSWORD = 'store-faults-admin';
const basic = { authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}` };
const keyvMemory = { 'x-provider-memory': 'keyv' };

interface Family {
  name: string;
  /** A fresh request per call (writes use fresh keys so a repeat is not a conflict). */
  request: () => InjectOptions;
  /** Checks a 503 body of its own (readiness and health bodies are not {detail, code}). */
  ownOutageBody?: (body: Record<string, unknown>) => boolean;
}

let seq = 0;
const fresh = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

function families(adminBearer: Record<string, string>): Family[] {
  return [
    { name: 'registry servers: list', request: () => ({ url: '/api/servers', headers: basic }) },
    {
      name: 'registry servers: register',
      request: () => ({
        method: 'POST',
        url: '/api/servers/register',
        headers: basic,
        payload: {
          server_name: 'Faults',
          description: 'fault test',
          path: `/${fresh('srv')}`,
          proxy_pass_url: 'http://127.0.0.1:9',
        },
      }),
    },
    {
      name: 'registry tokens: generate',
      request: () => ({ method: 'POST', url: '/api/tokens/generate', headers: adminBearer, payload: {} }),
    },
    {
      name: 'registry /validate',
      request: () => ({ url: '/validate', headers: { ...adminBearer, 'x-original-url': '/fz/mcp' } }),
    },
    { name: 'registry scopes', request: () => ({ url: '/api/scopes', headers: basic }) },
    { name: 'registry agents: list', request: () => ({ url: '/api/agents', headers: basic }) },
    { name: 'registry skills: list', request: () => ({ url: '/api/skills', headers: basic }) },
    {
      name: 'platform memory: store',
      request: () => ({
        method: 'POST',
        url: '/api/v1/memory/faults',
        headers: keyvMemory,
        payload: { key: fresh('k'), content: 'fault test' },
      }),
    },
    { name: 'platform memory: read', request: () => ({ url: '/api/v1/memory/faults/fixed', headers: keyvMemory }) },
    {
      name: 'platform memory: conversation events',
      request: () => ({
        method: 'POST',
        url: '/api/v1/memory/sessions/actor-1/session-1/events',
        headers: keyvMemory,
        payload: { messages: [{ role: 'user', text: 'hello' }] },
      }),
    },
    { name: 'platform agents: list', request: () => ({ url: '/api/v1/agents' }) },
    {
      name: 'platform agents: create',
      request: () => ({ method: 'POST', url: '/api/v1/agents', payload: { name: fresh('agent'), model: 'noop' } }),
    },
    { name: 'platform agent sessions', request: () => ({ url: '/api/v1/agents/helper/sessions' }) },
    {
      name: '/readyz',
      request: () => ({ url: '/readyz' }),
      ownOutageBody: (b) => (b.checks as Record<string, string> | undefined)?.['store/redis'] === 'down',
    },
    { name: '/health', request: () => ({ url: '/health' }), ownOutageBody: (b) => b.store === 'down' },
  ];
}

/** Built-in providers: noop, and keyv (memory on the core store, so the memory routes reach Redis). */
function storeBackedRoot(): string {
  const root = tempDir('sb-root-');
  mkdirSync(join(root, 'providers'));
  for (const p of ['noop', 'keyv']) symlinkSync(join(PROJECT_ROOT, 'providers', p), join(root, 'providers', p), 'dir');
  return root;
}

/** The request's answer, or a failed test and undefined when none came before the deadline. */
async function answer(t: Test, app: FastifyInstance, f: Family): Promise<LightMyRequestResponse | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ANSWER_DEADLINE_MS)));
  const res = await Promise.race([app.inject(f.request()), hang]).finally(() => clearTimeout(timer));
  if (!res) t.fail(`${f.name}: no answer within ${ANSWER_DEADLINE_MS} ms`);
  return res;
}

function json(res: LightMyRequestResponse): Record<string, unknown> {
  try {
    return res.json();
  } catch {
    return {};
  }
}

/** The fixtures the families read: a server /fz, an agent `helper`, a memory record. */
async function createFixtures(t: Test, app: FastifyInstance): Promise<void> {
  const server = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: basic,
    payload: { server_name: 'FZ', description: 'fault test', path: '/fz', proxy_pass_url: 'http://127.0.0.1:9' },
  });
  t.equal(server.statusCode, 201, `fixture server: ${server.body}`);
  const agent = await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'helper', model: 'noop' } });
  t.equal(agent.statusCode, 201, `fixture agent: ${agent.body}`);
  const rec = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/faults',
    headers: keyvMemory,
    payload: { key: 'fixed', content: 'kept' },
  });
  t.ok(rec.statusCode < 300, `fixture memory record: ${rec.body}`);
}

/** Every family answers as when healthy, or 503 naming the store; never a hang, never another 5xx. */
async function duringOutage(
  t: Test,
  app: FastifyInstance,
  fams: Family[],
  healthy: Map<string, number>,
  what: string,
): Promise<void> {
  for (const f of fams) {
    const res = await answer(t, app, f);
    if (!res) continue;
    const body = json(res);
    if (res.statusCode === healthy.get(f.name)) {
      t.pass(`${what}: ${f.name} keeps working (${res.statusCode})`);
      continue;
    }
    t.equal(
      res.statusCode,
      503,
      `${what}: ${f.name} answers 503 or as before, got ${res.statusCode} ${res.body.slice(0, 300)}`,
    );
    if (res.statusCode !== 503) continue;
    if (f.ownOutageBody?.(body)) {
      t.pass(`${what}: ${f.name} reports the store down in its own body`);
      continue;
    }
    t.same(
      Object.keys(body).sort(),
      ['code', 'detail'],
      `${what}: ${f.name}: the 503 body is {detail, code}: ${res.body.slice(0, 300)}`,
    );
    t.equal(body.code, 'SB_ERR_STORE_UNAVAILABLE', `${what}: ${f.name}: code`);
    t.match(body.detail, /Store 'redis'/, `${what}: ${f.name}: the detail names the store`);
  }
}

/** Every family answers as when healthy again, by itself, before the recovery deadline. */
async function recovers(
  t: Test,
  app: FastifyInstance,
  fams: Family[],
  healthy: Map<string, number>,
  what: string,
): Promise<void> {
  for (const f of fams) {
    const until = Date.now() + RECOVERY_DEADLINE_MS;
    let last: LightMyRequestResponse | undefined;
    while (Date.now() < until) {
      last = await answer(t, app, f);
      if (last?.statusCode === healthy.get(f.name)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    t.equal(last?.statusCode, healthy.get(f.name), `${what}: ${f.name} works again (${last?.body.slice(0, 200)})`);
  }
}

t.test('store faults: frozen, killed, restarted empty', async (t) => {
  let redis: PrivateRedis = await startRedis();
  t.teardown(() => {
    redis.thaw();
    redis.stop();
  });
  const app = await buildApp({
    env: { DATA_DIR: tempDir() },
    config: {
      store: { url: redis.url, command_timeout_ms: 2000 },
      registry: { admin_password: ADMIN_PASSWORD, health: { interval_seconds: 0 } },
    },
    logLevel: 'silent',
    discovery: { builtinRoot: storeBackedRoot() },
  });
  t.teardown(() => app.close());
  await app.ready();
  await createFixtures(t, app);
  const fams = families(await asUser(app, ['mcp-registry-admin'], 'faults-admin'));

  const healthy = new Map<string, number>();
  for (const f of fams) {
    const res = await answer(t, app, f);
    t.ok(
      res && res.statusCode >= 200 && res.statusCode < 300,
      `healthy: ${f.name} answers 2xx (${res?.statusCode} ${res?.body.slice(0, 200)})`,
    );
    if (res && res.statusCode < 300) healthy.set(f.name, res.statusCode);
  }

  t.test('frozen (SIGSTOP), then SIGCONT', async (t) => {
    redis.freeze();
    await duringOutage(t, app, fams, healthy, 'frozen');
    redis.thaw();
    await recovers(t, app, fams, healthy, 'after SIGCONT');
  });

  t.test('killed, then restarted empty at the same address', async (t) => {
    redis.stop();
    await waitExit(redis.child);
    await duringOutage(t, app, fams, healthy, 'killed');
    redis = await startRedis(redis.port);
    // What was stored is gone with the old process; what was seeded at start must come back.
    // The Basic admin registering the fixtures again is itself the check that it is still admin.
    const until = Date.now() + RECOVERY_DEADLINE_MS;
    let server: LightMyRequestResponse | undefined;
    const attempts: string[] = [];
    while (Date.now() < until) {
      server = await app.inject({
        method: 'POST',
        url: '/api/servers/register',
        headers: basic,
        payload: { server_name: 'FZ', description: 'fault test', path: '/fz', proxy_pass_url: 'http://127.0.0.1:9' },
      });
      attempts.push(`${server.statusCode} ${server.body.slice(0, 160)}`);
      // 409: an earlier attempt, answered while the client reconnected, stored the record after all.
      if (server.statusCode === 201 || server.statusCode === 409) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    t.ok(
      server?.statusCode === 201 || server?.statusCode === 409,
      `the Basic admin registers again once Redis is back (not 403): ${attempts.join(' | ')}`,
    );
    if (server?.statusCode === 409) t.comment(`register attempts after the restart: ${attempts.join(' | ')}`);
    const agent = await app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      payload: { name: 'helper', model: 'noop' },
    });
    t.equal(agent.statusCode, 201, `the agent fixture again: ${agent.body}`);
    await app.inject({
      method: 'POST',
      url: '/api/v1/memory/faults',
      headers: keyvMemory,
      payload: { key: 'fixed', content: 'kept' },
    });
    await recovers(t, app, fams, healthy, 'after the empty restart');
    const ready = await app.inject({ url: '/readyz' });
    t.same(ready.json().reseeded?.seeds, ['registry scopes'], '/readyz reports the re-seed');
    const me = await app.inject({ url: '/api/auth/me', headers: basic });
    t.equal(me.json().is_admin, true, 'the Basic admin is admin');
  });
});
