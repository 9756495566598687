import t from 'tap';
import type { ToolCaller, ToolsProvider } from '../../core/primitives/tools.ts';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';
import { registryTools } from '../../providers/registry-tools/index.ts';
import { makeApp, providerContextOf } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';

/**
 * The registry tools provider caches its view of the catalog per caller (catalog_ttl_seconds). With the
 * registry in the same process, a change to the servers drops that cache: what a client just registered,
 * toggled or deleted shows in the platform's tools views on the next call, not an hour later.
 */
t.test('an in-process registry change shows in the tools provider at once, whatever the TTL', async (t) => {
  const app = await makeApp(t, {
    registry: { health: { interval_seconds: 0, timeout_seconds: 1, first_check_retry_seconds: [] } },
  });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const provider = (await registryTools.create(
    'reg',
    { catalog_ttl_seconds: 3600, principal_scopes: { noop: ['mcp-registry-admin'] } },
    providerContextOf(app),
  )) as ToolsProvider;
  t.teardown(() => provider.close());
  const events = catalogOf(app).servers.index.events;
  const followers = () => events.listenerCount('change') + events.listenerCount('reload');
  const before = followers();
  const caller: ToolCaller = {
    principal: { id: 'noop', type: 'user', is_admin: true, groups: [], scopes: [] },
    headers: {},
  };
  const servers = async () => (await provider.listServers(caller)).map((s) => s.name).sort();
  t.same(await servers(), [], 'an empty catalog (and now a cached view of it)');

  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: { name: 'fresh', description: 'd', path: '/fresh', proxy_pass_url: 'http://127.0.0.1:9/mcp' },
  });
  t.equal(reg.statusCode, 201, reg.body);
  t.same(await servers(), ['fresh'], 'a registration shows on the next call');

  const del = await app.inject({ method: 'DELETE', url: '/api/servers/fresh', headers: admin });
  t.ok(del.statusCode < 300, `deleted: ${del.statusCode} ${del.body}`);
  t.same(await servers(), [], 'and so does a deletion');

  t.equal(followers(), before + 2, 'the provider follows changes and reloads of the catalog');
  await provider.close();
  t.equal(followers(), before, 'a closed provider no longer follows the catalog');
});
