import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { adminBasic, asUser, mintToken, withScope } from '../helpers/registry-auth.ts';

const form = (o: Record<string, string>) => ({ payload: new URLSearchParams(o).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });

t.test('programmatic register, read, update, delete with admin and limited users', async (t) => {
  const app = await makeApp(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const reader = await asUser(app, ['mcp-registry-user'], 'bob');

  const reg = await app.inject({
    method: 'POST', url: '/api/servers/register',
    ...form({ name: 'Weather', description: 'Forecasts', path: '/weather', proxy_pass_url: 'http://127.0.0.1:9/mcp', tags: 'a, b,a', num_tools: '2', is_python: 'true' }),
    headers: { ...form({}).headers, ...admin },
  });
  t.equal(reg.statusCode, 201, reg.body);
  t.same(reg.json(), { message: 'Service /weather registered', path: '/weather', server_name: 'Weather', name: 'Weather', version: 'v1.0.0', is_enabled: true, health_status: 'unknown', auth_scheme: 'none', auth_header_name: null, auth_credential_encrypted: false });

  const again = await app.inject({ method: 'POST', url: '/api/servers/register', ...form({ name: 'W', description: 'd', path: '/weather', proxy_pass_url: 'http://x' }), headers: { ...form({}).headers, ...admin } });
  t.equal(again.statusCode, 409);
  t.equal(again.json().code, 'SB_ERR_REGISTRY_SERVER_EXISTS');

  const denied = await app.inject({ method: 'POST', url: '/api/servers/register', ...form({ name: 'X', description: 'd', path: '/x', proxy_pass_url: 'http://x' }), headers: { ...form({}).headers, ...reader } });
  t.equal(denied.statusCode, 403);
  const anon = await app.inject({ method: 'POST', url: '/api/servers/register', ...form({ name: 'X', description: 'd', path: '/x', proxy_pass_url: 'http://x' }) });
  t.equal(anon.statusCode, 401);

  const got = await app.inject({ method: 'GET', url: '/api/servers/weather', headers: reader });
  t.equal(got.statusCode, 200, got.body);
  t.equal(got.json().server_name, 'Weather');
  t.same(got.json().tags, ['a', 'b']);
  t.notOk('proxy_pass_url' in got.json(), 'backend hidden from non-admins in gateway mode');
  const gotAdmin = await app.inject({ method: 'GET', url: '/api/servers/weather', headers: admin });
  t.equal(gotAdmin.json().proxy_pass_url, 'http://127.0.0.1:9/mcp');
});
