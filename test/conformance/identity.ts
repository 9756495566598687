import type { IdentityProvider } from '../../core/primitives/identity.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

export const IDENTITY_CASES = {
  credentialProviders: 'credential providers: create, get, list, update, delete',
  secretsHidden: 'secret config values are never returned',
  workloadIdentities: 'workload identities: create, get, list, update, delete',
  apiKey: 'a workload token unlocks the API key of an api_key credential provider',
  oauthToken: 'a workload token gets an OAuth2 token (M2M) from an oauth2 credential provider',
  unsupported: 'capabilities declared false reject with 501',
} as const;

export interface IdentitySuiteOptions extends SuiteOptions<IdentityProvider> {
  /** Config of an oauth2 credential provider whose token endpoint the provider can reach (M2M). */
  oauth2Config?: Record<string, unknown>;
}

/** The identity suite: every identity provider runs it with its own runner and named skips. */
export async function identitySuite(t: Runner, opts: IdentitySuiteOptions): Promise<void> {
  const run = caseRunner(t, opts);

  await run(IDENTITY_CASES.credentialProviders, async (t, p) => {
    const created = await p.createCredentialProvider({ name: 'github', provider_type: 'oauth2', config: { client_id: 'abc', scopes: ['repo'] } });
    t.match(created, { name: 'github', provider_type: 'oauth2', config: { client_id: 'abc', scopes: ['repo'] } });
    t.equal(await p.createCredentialProvider({ name: 'github', provider_type: 'oauth2' }), undefined, 'a taken name is refused');
    t.equal((await p.getCredentialProvider('github'))?.provider_type, 'oauth2');
    t.same((await p.listCredentialProviders()).map((x) => x.name), ['github']);
    const updated = await p.updateCredentialProvider('github', { config: { client_id: 'xyz' } });
    t.same(updated?.config, { client_id: 'xyz' }, 'update replaces the config');
    t.equal(await p.updateCredentialProvider('nope', { config: {} }), undefined);
    t.equal(await p.deleteCredentialProvider('github'), true);
    t.equal(await p.getCredentialProvider('github'), undefined);
    t.equal(await p.deleteCredentialProvider('github'), false);
  });

  await run(IDENTITY_CASES.secretsHidden, async (t, p) => {
    const secret = 'sk-very-secret-value-1234';
    const made = await p.createCredentialProvider({ name: 'openai', provider_type: 'api_key', config: { api_key: secret, nested: { client_secret: secret }, region: 'eu' } });
    for (const seen of [made, await p.getCredentialProvider('openai'), ...(await p.listCredentialProviders())]) {
      t.notOk(JSON.stringify(seen).includes(secret), 'the secret is not in the record');
      t.equal(seen?.config.region, 'eu', 'non-secret values are shown');
    }
  });

  await run(IDENTITY_CASES.workloadIdentities, async (t, p) => {
    const w = await p.createWorkloadIdentity({ name: 'agent-1', allowed_return_urls: ['https://app.example/cb'] });
    t.match(w, { name: 'agent-1', allowed_return_urls: ['https://app.example/cb'] });
    t.equal(await p.createWorkloadIdentity({ name: 'agent-1' }), undefined, 'a taken name is refused');
    t.same((await p.listWorkloadIdentities()).map((x) => x.name), ['agent-1']);
    t.same((await p.updateWorkloadIdentity('agent-1', { allowed_return_urls: [] }))?.allowed_return_urls, []);
    t.equal(await p.updateWorkloadIdentity('nope', { allowed_return_urls: [] }), undefined);
    t.equal(await p.deleteWorkloadIdentity('agent-1'), true);
    t.equal(await p.getWorkloadIdentity('agent-1'), undefined);
  });

  await run(IDENTITY_CASES.apiKey, async (t, p) => {
    await p.createWorkloadIdentity({ name: 'conf-agent' });
    await p.createCredentialProvider({ name: 'conf-keys', provider_type: 'api_key', config: { api_key: 'sk-conf-1234' } });
    const wt = await p.getWorkloadToken({ workload_name: 'conf-agent', user_id: 'alice' });
    t.equal(wt.workload_name, 'conf-agent');
    t.ok(wt.workload_token.length > 0, 'a workload token is issued');
    t.same(await p.getApiKey({ credential_provider: 'conf-keys', workload_token: wt.workload_token }), { credential_provider: 'conf-keys', api_key: 'sk-conf-1234' });
    await t.rejects(p.getApiKey({ credential_provider: 'conf-keys', workload_token: 'forged' }), 'a forged workload token is refused');
  });

  await run(IDENTITY_CASES.oauthToken, async (t, p) => {
    if (!opts.oauth2Config) return void t.ok(false, 'the OAuth2 case needs `oauth2Config`: pass it or skip the case by name');
    await p.createWorkloadIdentity({ name: 'conf-agent' });
    await p.createCredentialProvider({ name: 'conf-oauth', provider_type: 'oauth2', config: opts.oauth2Config });
    const wt = await p.getWorkloadToken({ workload_name: 'conf-agent' });
    const tok = await p.getToken({ credential_provider: 'conf-oauth', workload_token: wt.workload_token, scopes: [], auth_flow: 'M2M', force_authentication: false });
    t.ok(tok.access_token, 'an access token is returned');
  });

  await run(IDENTITY_CASES.unsupported, async (t, p) => {
    const gated: Array<[string, () => Promise<unknown>]> = [
      ['tokens', () => p.getToken({ credential_provider: 'x', workload_token: 'w', scopes: [], auth_flow: 'M2M', force_authentication: false })],
      ['api_keys', () => p.getApiKey({ credential_provider: 'x', workload_token: 'w' })],
      ['workload_tokens', () => p.getWorkloadToken({ workload_name: 'x' })],
    ];
    let checked = 0;
    for (const [cap, call] of gated) {
      if (p.capabilities[cap] === true) continue;
      checked++;
      await t.rejects(call(), { statusCode: 501 }, `capability '${cap}' is false, so the call is a 501`);
    }
    t.comment(`${checked} unsupported operations checked`);
  });
}
