import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

t.test('the scan hook passes by default and can block: disabled, security-pending, out of discovery', async (t) => {
  const app = await makeApp(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const reader = await asUser(app, ['mcp-registry-user'], 'bob');
  const register = (path: string) =>
    app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: { ...FORM, ...admin },
      payload: new URLSearchParams({
        name: path,
        description: 'd',
        path,
        proxy_pass_url: 'http://127.0.0.1:9/',
      }).toString(),
    });
  const clean = await register('/clean');
  t.match(clean.json(), { is_enabled: true, tags: [] });
  t.match(clean.json().security_scan, { status: 'SAFE' }, 'the registry scanning plugin answers with its summary');

  const catalog = catalogOf(app);
  catalog.scanner = {
    server: async (s) => ({
      blocked: s.path === '/bad',
      summary: { status: s.path === '/bad' ? 'UNSAFE' : 'SAFE', high: s.path === '/bad' ? 1 : 0 },
    }),
    agent: async (a) => ({ blocked: a.name === 'evil' }),
    skill: async () => ({ blocked: false }),
  };
  const bad = await register('/bad');
  t.equal(bad.statusCode, 201);
  t.match(bad.json(), { is_enabled: false, tags: ['security-pending'], security_scan: { status: 'UNSAFE', high: 1 } });
  t.match((await register('/fine')).json(), { is_enabled: true, security_scan: { status: 'SAFE' } });
  const wk = (await app.inject({ url: '/.well-known/mcp-servers' }))
    .json()
    .servers.map((s: { display_name: string }) => s.display_name);
  t.same(wk, ['/clean', '/fine']);
  t.same(
    (await app.inject({ url: '/v0/servers', headers: reader }))
      .json()
      .servers.map((s: { _meta: { path: string } }) => s._meta.path),
    ['/clean', '/fine'],
  );
  t.equal(
    (await app.inject({ url: '/api/servers/bad', headers: reader })).json().is_enabled,
    false,
    'still readable, with its tag',
  );

  const evil = await app.inject({
    method: 'POST',
    url: '/api/agents/register',
    headers: admin,
    payload: { name: 'evil', skills: ['translate'] },
  });
  t.equal(evil.json().agent.is_enabled, false);
  const discover = async () =>
    (
      await app.inject({
        method: 'POST',
        url: '/api/agents/discover',
        headers: reader,
        payload: { skills: ['translate'] },
      })
    ).json().agents;
  t.same(await discover(), [], 'security-pending agents stay out of discovery');
  // The admin's toggle is the review (spec 3): it lifts the security-pending mark with the block.
  const toggled = await app.inject({ method: 'POST', url: '/api/agents/evil/toggle?enabled=true', headers: admin });
  t.equal(toggled.json().is_enabled, true);
  t.equal((await discover()).length, 1, 'reviewed and enabled, the agent is discoverable again');
});
