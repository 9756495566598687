import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import type { UserContext } from '../../plugins/registry/auth/context.ts';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';
import { makeApp } from '../helpers/app.ts';
import { registerServer } from '../helpers/registry-servers.ts';
import { adminBasic, asUser } from '../helpers/registry-auth.ts';
import { startControlledServer } from '../mcp/controlled-server.ts';

async function setup(t: Test, registry: Record<string, unknown> = {}) {
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 0.5 }, ...registry } });
  return { app, admin: await asUser(app, ['mcp-registry-admin'], 'alice') };
}

/**
 * Registration refuses these addresses too, so the records are written
 * through the catalog's repository, as they would stand after being
 * registered under a config that allowed them (or under a name that was
 * re-pointed since). Their first check runs at once, under this config.
 */
async function storedAnyway(
  app: FastifyInstance,
  servers: Array<Record<string, unknown> & { path: string; proxy_pass_url: string }>,
): Promise<void> {
  for (const s of servers) {
    await catalogOf(app).servers.register(
      { server_name: s.path, description: 'guard test', ...s },
      { auth_scheme: 'none' },
      { username: 'alice' } as UserContext,
      { via: 'test' },
    );
  }
}

const BLOCKED: Array<[string, string, string]> = [
  ['/meta-v4', 'http://169.254.169.254', 'metadata'],
  ['/meta-v6', 'http://[fd00:ec2::254]:8080', 'metadata'],
  ['/meta-name', 'http://metadata.google.internal', 'metadata'],
  ['/ll-v4', 'http://169.254.10.10:9000', 'link-local'],
  ['/ll-v6', 'http://[fe80::1]:9000', 'link-local'],
];

t.test('link-local and cloud-metadata backends are never probed; the status says why', async (t) => {
  const { app, admin } = await setup(t);
  await storedAnyway(
    app,
    BLOCKED.map(([path, url]) => ({ path, proxy_pass_url: url })),
  );
  const sweep = await app.inject({ method: 'POST', url: '/api/internal/healthcheck', headers: adminBasic(app) });
  t.equal(sweep.statusCode, 200, sweep.body);
  for (const [path, url, cls] of BLOCKED)
    t.equal(sweep.json()[path].status, `unhealthy: blocked address (${cls})`, url);
  const refreshed = await app.inject({ method: 'POST', url: '/api/servers/meta-v4/refresh', headers: admin });
  t.equal(refreshed.json().health_status, 'unhealthy: blocked address (metadata)', 'a refresh is refused the same way');
});

t.test(
  'an mcp_endpoint or sse_endpoint elsewhere is judged too, and the registered backend is not contacted',
  async (t) => {
    const srv = await startControlledServer();
    t.teardown(() => srv.stop());
    const { app, admin } = await setup(t);
    await storedAnyway(app, [
      { path: '/mcp-to-meta', proxy_pass_url: srv.base, mcp_endpoint: 'http://169.254.169.254/mcp' },
      { path: '/sse-to-ll', proxy_pass_url: srv.base, sse_endpoint: 'http://169.254.1.1/sse' },
    ]);
    const a = await app.inject({ method: 'POST', url: '/api/servers/mcp-to-meta/refresh', headers: admin });
    t.equal(a.json().health_status, 'unhealthy: blocked address (metadata)');
    const b = await app.inject({ method: 'POST', url: '/api/servers/sse-to-ll/refresh', headers: admin });
    t.equal(b.json().health_status, 'unhealthy: blocked address (link-local)');
    t.same(srv.seen, [], 'nothing was sent anywhere');
  },
);

t.test('registry.allow_link_local_backends: true lets the probe go out', async (t) => {
  const { app, admin } = await setup(t, { allow_link_local_backends: true });
  await registerServer(t, app, admin, {
    name: 'Allowed',
    path: '/allowed',
    proxy_pass_url: 'http://169.254.10.10:9000',
  });
  const r = await app.inject({ method: 'POST', url: '/api/servers/allowed/refresh', headers: admin });
  // Whatever answers there (nothing, or a network's own gateway), the probe was attempted rather than refused.
  t.equal(r.statusCode, 200, r.body);
  t.notMatch(r.json().health_status, /blocked address/);
  t.ok(r.json().last_checked_iso);
});
