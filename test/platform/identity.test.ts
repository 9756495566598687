import t from 'tap';
import { makeApp } from '../helpers/app.ts';

const base = '/api/v1/identity';

t.test('noop mode: token endpoints answer 501 naming the capability', async (t) => {
  const app = await makeApp(t);
  const cases: Array<[string, object, RegExp]> = [
    ['/token', { credential_provider: 'github', workload_token: 'wt', scopes: ['repo'] }, /identity provider 'noop' does not support token issuance \(capability 'tokens'\).*X-Provider-Identity/],
    ['/api-key', { credential_provider: 'openai', workload_token: 'wt' }, /API key retrieval \(capability 'api_keys'\)/],
    ['/workload-token', { workload_name: 'agent-1', user_id: 'alice' }, /workload token issuance \(capability 'workload_tokens'\)/],
  ];
  for (const [path, payload, detail] of cases) {
    const res = await app.inject({ method: 'POST', url: base + path, payload });
    t.equal(res.statusCode, 501, `${path} is 501 on noop`);
    t.match(res.json(), { code: 'SB_ERR_CAPABILITY_MISSING', detail });
  }
  // Bad input is refused before the capability: the caller can fix it whatever the provider.
  const bad = await app.inject({ method: 'POST', url: `${base}/token`, payload: { workload_token: 'wt' } });
  t.equal(bad.statusCode, 422);
  t.match(bad.json().detail, [{ loc: ['body', 'credential_provider'] }]);
  t.equal((await app.inject({ method: 'POST', url: `${base}/token`, payload: { credential_provider: 'g', workload_token: 'w', auth_flow: 'IMPLICIT' } })).statusCode, 422);
});

t.test('credential providers CRUD keeps secrets write-only', async (t) => {
  const app = await makeApp(t);
  const secret = 'cs-0123456789abcdef';
  const created = await app.inject({
    method: 'POST',
    url: `${base}/credential-providers`,
    payload: { name: 'github', provider_type: 'oauth2', config: { client_id: 'abc', client_secret: secret, token_url: 'https://github.example/token' } },
  });
  t.equal(created.statusCode, 201);
  t.match(created.json(), { name: 'github', provider_type: 'oauth2', config: { client_id: 'abc', client_secret: '********', token_url: 'https://github.example/token' } });
  t.notOk(created.body.includes(secret), 'the secret is not echoed');
  const dup = await app.inject({ method: 'POST', url: `${base}/credential-providers`, payload: { name: 'github', provider_type: 'oauth2' } });
  t.equal(dup.statusCode, 409);
  t.equal(dup.json().code, 'SB_ERR_IDENTITY_PROVIDER_EXISTS');

  const list = await app.inject({ method: 'GET', url: `${base}/credential-providers` });
  t.equal(list.statusCode, 200);
  t.same(list.json().credential_providers.map((p: { name: string }) => p.name), ['github']);
  t.notOk(list.body.includes(secret));
  const one = await app.inject({ method: 'GET', url: `${base}/credential-providers/github` });
  t.equal(one.json().config.client_secret, '********');

  const put = await app.inject({ method: 'PUT', url: `${base}/credential-providers/github`, payload: { config: { client_id: 'new' } } });
  t.equal(put.statusCode, 200);
  t.same(put.json().config, { client_id: 'new' });
  t.equal((await app.inject({ method: 'PUT', url: `${base}/credential-providers/nope`, payload: { config: {} } })).statusCode, 404);
  t.equal((await app.inject({ method: 'POST', url: `${base}/credential-providers`, payload: { name: 'x', provider_type: 'saml' } })).statusCode, 422, 'unknown provider_type');
  t.equal((await app.inject({ method: 'POST', url: `${base}/credential-providers`, payload: { name: 'bad name', provider_type: 'api_key' } })).statusCode, 422, 'name must be URL-safe');

  t.equal((await app.inject({ method: 'DELETE', url: `${base}/credential-providers/github` })).statusCode, 204);
  const gone = await app.inject({ method: 'GET', url: `${base}/credential-providers/github` });
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().code, 'SB_ERR_IDENTITY_PROVIDER_NOT_FOUND');
  t.equal((await app.inject({ method: 'DELETE', url: `${base}/credential-providers/github` })).statusCode, 404);
});

t.test('workload identities CRUD', async (t) => {
  const app = await makeApp(t);
  const created = await app.inject({ method: 'POST', url: `${base}/workload-identities`, payload: { name: 'agent-1', allowed_return_urls: ['https://app.example/cb'] } });
  t.equal(created.statusCode, 201);
  t.match(created.json(), { name: 'agent-1', allowed_return_urls: ['https://app.example/cb'], created_at: String, updated_at: String });
  t.equal((await app.inject({ method: 'POST', url: `${base}/workload-identities`, payload: { name: 'agent-1' } })).statusCode, 409);
  const minimal = await app.inject({ method: 'POST', url: `${base}/workload-identities`, payload: { name: 'agent-2' } });
  t.same(minimal.json().allowed_return_urls, []);
  t.same((await app.inject({ method: 'GET', url: `${base}/workload-identities` })).json().workload_identities.map((w: { name: string }) => w.name), ['agent-1', 'agent-2']);
  const put = await app.inject({ method: 'PUT', url: `${base}/workload-identities/agent-1`, payload: { allowed_return_urls: ['https://other.example/cb'] } });
  t.same(put.json().allowed_return_urls, ['https://other.example/cb']);
  t.equal((await app.inject({ method: 'PUT', url: `${base}/workload-identities/agent-1`, payload: { allowed_return_urls: ['not a url'] } })).statusCode, 422);
  t.equal((await app.inject({ method: 'GET', url: `${base}/workload-identities/agent-1` })).json().name, 'agent-1');
  t.equal((await app.inject({ method: 'DELETE', url: `${base}/workload-identities/agent-1` })).statusCode, 204);
  const gone = await app.inject({ method: 'GET', url: `${base}/workload-identities/agent-1` });
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().code, 'SB_ERR_IDENTITY_WORKLOAD_NOT_FOUND');
});

t.test('an unknown identity provider header is a 400 listing the available ones', async (t) => {
  const app = await makeApp(t);
  const res = await app.inject({ method: 'GET', url: `${base}/workload-identities`, headers: { 'x-provider-identity': 'vault' } });
  t.equal(res.statusCode, 400);
  t.equal(res.json().detail, "Unknown identity provider 'vault'. Available: noop");
});
