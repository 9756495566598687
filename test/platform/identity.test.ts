import t from 'tap';
import type { IdentityProvider } from '../../core/primitives/identity.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { IDENTITY_CASES, identitySuite } from '../conformance/identity.ts';
import type { Runner } from '../conformance/kit.ts';
import { firstFactory, writeProviderPackage } from '../fixtures/provider-package.ts';
import { makeApp } from '../helpers/app.ts';

/**
 * A throwaway identity provider package that issues workload tokens (`wt.<name>`)
 * and hands out the API key stored in an api_key credential provider, so the
 * token routes' success path and the api-key conformance case run end to end.
 */
function vaultPackage(): string {
  return writeProviderPackage({
    name: 'fixture-vault',
    provides: ['identity'],
    source: `const hide = (c) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, /key|secret/.test(k) ? '********' : v && typeof v === 'object' && !Array.isArray(v) ? hide(v) : v]));
export const providers = [{
  type: 'vault', kind: 'identity',
  create: (name) => {
    const cps = new Map(); const wls = new Map(); const now = () => new Date().toISOString();
    const show = (p) => ({ ...p, config: hide(p.config) });
    const check = (wt) => { if (!wt.startsWith('wt.') || !wls.has(wt.slice(3))) throw new Error('invalid workload token'); };
    return {
      name, type: 'vault', kind: 'identity',
      capabilities: { tokens: true, api_keys: true, workload_tokens: true, credential_providers: true, workload_identities: true },
      getToken: async (req) => (check(req.workload_token), { access_token: 'at.' + req.credential_provider, token_type: 'Bearer', expires_in: 3600, authorization_url: null }),
      getApiKey: async (req) => (check(req.workload_token), { credential_provider: req.credential_provider, api_key: cps.get(req.credential_provider).config.api_key }),
      getWorkloadToken: async (req) => { if (!wls.has(req.workload_name)) throw new Error('unknown workload'); return { workload_name: req.workload_name, workload_token: 'wt.' + req.workload_name }; },
      createCredentialProvider: async (req) => { if (cps.has(req.name)) return undefined; const p = { name: req.name, provider_type: req.provider_type, config: req.config ?? {}, created_at: now(), updated_at: now() }; cps.set(p.name, p); return show(p); },
      listCredentialProviders: async () => [...cps.values()].map(show),
      getCredentialProvider: async (n) => cps.has(n) ? show(cps.get(n)) : undefined,
      updateCredentialProvider: async (n, req) => { if (!cps.has(n)) return undefined; const p = { ...cps.get(n), config: req.config, updated_at: now() }; cps.set(n, p); return show(p); },
      deleteCredentialProvider: async (n) => cps.delete(n),
      createWorkloadIdentity: async (req) => { if (wls.has(req.name)) return undefined; const w = { name: req.name, allowed_return_urls: req.allowed_return_urls ?? [], created_at: now(), updated_at: now() }; wls.set(w.name, w); return w; },
      listWorkloadIdentities: async () => [...wls.values()],
      getWorkloadIdentity: async (n) => wls.get(n),
      updateWorkloadIdentity: async (n, req) => { if (!wls.has(n)) return undefined; const w = { ...wls.get(n), allowed_return_urls: req.allowed_return_urls, updated_at: now() }; wls.set(n, w); return w; },
      deleteWorkloadIdentity: async (n) => wls.delete(n),
      healthcheck: async () => 'ok', close: async () => {},
    };
  },
}];\n`,
  });
}

const base = '/api/v1/identity';

t.test('noop mode: token endpoints answer 501 naming the capability', async (t) => {
  const app = await makeApp(t);
  const cases: Array<[string, object, RegExp]> = [
    [
      '/token',
      { credential_provider: 'github', workload_token: 'wt', scopes: ['repo'] },
      /identity provider 'noop' does not support token issuance \(capability 'tokens'\).*X-Provider-Identity/,
    ],
    [
      '/api-key',
      { credential_provider: 'openai', workload_token: 'wt' },
      /API key retrieval \(capability 'api_keys'\)/,
    ],
    [
      '/workload-token',
      { workload_name: 'agent-1', user_id: 'alice' },
      /workload token issuance \(capability 'workload_tokens'\)/,
    ],
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
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: `${base}/token`,
        payload: { credential_provider: 'g', workload_token: 'w', auth_flow: 'IMPLICIT' },
      })
    ).statusCode,
    422,
  );
});

t.test('credential providers CRUD keeps secrets write-only', async (t) => {
  const app = await makeApp(t);
  const secret = 'cs-0123456789abcdef';
  const created = await app.inject({
    method: 'POST',
    url: `${base}/credential-providers`,
    payload: {
      name: 'github',
      provider_type: 'oauth2',
      config: { client_id: 'abc', client_secret: secret, token_url: 'https://github.example/token' },
    },
  });
  t.equal(created.statusCode, 201);
  t.match(created.json(), {
    name: 'github',
    provider_type: 'oauth2',
    config: { client_id: 'abc', client_secret: '********', token_url: 'https://github.example/token' },
  });
  t.notOk(created.body.includes(secret), 'the secret is not echoed');
  const dup = await app.inject({
    method: 'POST',
    url: `${base}/credential-providers`,
    payload: { name: 'github', provider_type: 'oauth2' },
  });
  t.equal(dup.statusCode, 409);
  t.equal(dup.json().code, 'SB_ERR_IDENTITY_PROVIDER_EXISTS');

  const list = await app.inject({ method: 'GET', url: `${base}/credential-providers` });
  t.equal(list.statusCode, 200);
  t.same(
    list.json().credential_providers.map((p: { name: string }) => p.name),
    ['github'],
  );
  t.notOk(list.body.includes(secret));
  const one = await app.inject({ method: 'GET', url: `${base}/credential-providers/github` });
  t.equal(one.json().config.client_secret, '********');

  const put = await app.inject({
    method: 'PUT',
    url: `${base}/credential-providers/github`,
    payload: { config: { client_id: 'new' } },
  });
  t.equal(put.statusCode, 200);
  t.same(put.json().config, { client_id: 'new' });
  t.equal(
    (await app.inject({ method: 'PUT', url: `${base}/credential-providers/nope`, payload: { config: {} } })).statusCode,
    404,
  );
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: `${base}/credential-providers`,
        payload: { name: 'x', provider_type: 'saml' },
      })
    ).statusCode,
    422,
    'unknown provider_type',
  );
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: `${base}/credential-providers`,
        payload: { name: 'bad name', provider_type: 'api_key' },
      })
    ).statusCode,
    422,
    'name must be URL-safe',
  );

  t.equal((await app.inject({ method: 'DELETE', url: `${base}/credential-providers/github` })).statusCode, 204);
  const gone = await app.inject({ method: 'GET', url: `${base}/credential-providers/github` });
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().code, 'SB_ERR_IDENTITY_PROVIDER_NOT_FOUND');
  t.equal((await app.inject({ method: 'DELETE', url: `${base}/credential-providers/github` })).statusCode, 404);
});

t.test('workload identities CRUD', async (t) => {
  const app = await makeApp(t);
  const created = await app.inject({
    method: 'POST',
    url: `${base}/workload-identities`,
    payload: { name: 'agent-1', allowed_return_urls: ['https://app.example/cb'] },
  });
  t.equal(created.statusCode, 201);
  t.match(created.json(), {
    name: 'agent-1',
    allowed_return_urls: ['https://app.example/cb'],
    created_at: String,
    updated_at: String,
  });
  t.equal(
    (await app.inject({ method: 'POST', url: `${base}/workload-identities`, payload: { name: 'agent-1' } })).statusCode,
    409,
  );
  const minimal = await app.inject({
    method: 'POST',
    url: `${base}/workload-identities`,
    payload: { name: 'agent-2' },
  });
  t.same(minimal.json().allowed_return_urls, []);
  t.same(
    (await app.inject({ method: 'GET', url: `${base}/workload-identities` }))
      .json()
      .workload_identities.map((w: { name: string }) => w.name),
    ['agent-1', 'agent-2'],
  );
  const put = await app.inject({
    method: 'PUT',
    url: `${base}/workload-identities/agent-1`,
    payload: { allowed_return_urls: ['https://other.example/cb'] },
  });
  t.same(put.json().allowed_return_urls, ['https://other.example/cb']);
  t.equal(
    (
      await app.inject({
        method: 'PUT',
        url: `${base}/workload-identities/agent-1`,
        payload: { allowed_return_urls: ['not a url'] },
      })
    ).statusCode,
    422,
  );
  t.equal((await app.inject({ method: 'GET', url: `${base}/workload-identities/agent-1` })).json().name, 'agent-1');
  t.equal((await app.inject({ method: 'DELETE', url: `${base}/workload-identities/agent-1` })).statusCode, 204);
  const gone = await app.inject({ method: 'GET', url: `${base}/workload-identities/agent-1` });
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().code, 'SB_ERR_IDENTITY_WORKLOAD_NOT_FOUND');
});

t.test('an unknown identity provider header is a 400 listing the available ones', async (t) => {
  const app = await makeApp(t);
  const res = await app.inject({
    method: 'GET',
    url: `${base}/workload-identities`,
    headers: { 'x-provider-identity': 'vault' },
  });
  t.equal(res.statusCode, 400);
  t.equal(res.json().detail, "Unknown identity provider 'vault'. Available: noop");
});

t.test('a provider that issues tokens: workload token, API key, OAuth2 token', async (t) => {
  const app = await makeApp(t, {
    provider_packages: [vaultPackage()],
    providers: { identity: { default: 'vault', instances: { vault: { type: 'vault' } } } },
  });
  await app.inject({ method: 'POST', url: `${base}/workload-identities`, payload: { name: 'agent-1' } });
  await app.inject({
    method: 'POST',
    url: `${base}/credential-providers`,
    payload: { name: 'openai', provider_type: 'api_key', config: { api_key: 'sk-held-by-vault-0000' } },
  });
  const wt = await app.inject({
    method: 'POST',
    url: `${base}/workload-token`,
    payload: { workload_name: 'agent-1', user_id: 'alice' },
  });
  t.equal(wt.statusCode, 200);
  t.same(wt.json(), { workload_name: 'agent-1', workload_token: 'wt.agent-1' });
  const key = await app.inject({
    method: 'POST',
    url: `${base}/api-key`,
    payload: { credential_provider: 'openai', workload_token: 'wt.agent-1' },
  });
  t.equal(key.statusCode, 200);
  t.same(
    key.json(),
    { credential_provider: 'openai', api_key: 'sk-held-by-vault-0000' },
    'the API key endpoint is the one place a key is handed out',
  );
  const tok = await app.inject({
    method: 'POST',
    url: `${base}/token`,
    payload: { credential_provider: 'github', workload_token: 'wt.agent-1', scopes: ['repo'] },
  });
  t.equal(tok.statusCode, 200);
  t.same(tok.json(), { access_token: 'at.github', token_type: 'Bearer', expires_in: 3600, authorization_url: null });
  t.equal(
    (await app.inject({ method: 'GET', url: `${base}/credential-providers/openai` })).json().config.api_key,
    '********',
    'reads stay redacted',
  );
  const forged = await app.inject({
    method: 'POST',
    url: `${base}/api-key`,
    payload: { credential_provider: 'openai', workload_token: 'forged' },
  });
  t.equal(forged.statusCode, 502, 'an uncoded provider failure is a backend failure');
  t.match(forged.json(), {
    code: 'SB_ERR_IDENTITY_BACKEND_FAILED',
    detail: "The identity provider 'vault' failed during API key retrieval: invalid workload token",
  });
});

t.test('the vault fixture passes the identity suite, api-key case included', async (t) => {
  const factory = await firstFactory<IdentityProvider>(vaultPackage());
  await identitySuite(t as unknown as Runner, {
    make: async () => factory.create('vault', {}, {} as ProviderContext),
    oauth2Config: { token_url: 'http://127.0.0.1:9/token', client_id: 'c' },
    skip: [
      {
        reason: 'the fixture declares every capability, so nothing is unsupported',
        tests: [IDENTITY_CASES.unsupported],
      },
      {
        reason: 'the fixture has no issuer, signs nothing and answers every name',
        tests: [IDENTITY_CASES.tokenExchange, IDENTITY_CASES.workloadJwks, IDENTITY_CASES.unknownProvider],
      },
    ],
  });
});
