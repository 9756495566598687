import type { IdentityProvider } from '../../core/primitives/identity.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

export const IDENTITY_CASES = {
  credentialProviders: 'credential providers: create, get, list, update, delete',
  secretsHidden: 'secret config values are never returned',
  workloadIdentities: 'workload identities: create, get, list, update, delete',
  apiKey: 'a workload token unlocks the API key of an api_key credential provider',
  oauthToken: 'a workload token gets an OAuth2 token (M2M) from an oauth2 credential provider',
  tokenExchange: 'TOKEN_EXCHANGE trades a subject token for a token with the requested audience',
  workloadJwks: 'workload tokens verify with the published JWKS and carry sub, aud and a short expiry',
  unknownProvider: 'token and API key requests naming an unknown credential provider reject with 404',
  unsupported: 'capabilities declared false reject with 501',
} as const;

export interface IdentitySuiteOptions extends SuiteOptions<IdentityProvider> {
  /** Config of an oauth2 credential provider whose token endpoint the provider can reach (M2M). */
  oauth2Config?: Record<string, unknown>;
  /** For the token exchange case: a subject token the provider's issuer accepts, and how to check the result. */
  exchange?: { subjectToken: string; audience: string; check: (t: Runner, accessToken: string) => Promise<void> };
  /** For the workload JWKS case: verify a workload token with the provider's published keys, returning its claims. */
  verifyWorkload?: (token: string, jwks: { keys: Array<Record<string, unknown>> }) => Promise<Record<string, unknown>>;
}

/** The identity suite: every identity provider runs it with its own runner and named skips. */
export async function identitySuite(t: Runner, opts: IdentitySuiteOptions): Promise<void> {
  const run = caseRunner(t, opts);

  await run(IDENTITY_CASES.credentialProviders, async (t, p) => {
    const created = await p.createCredentialProvider({
      name: 'github',
      provider_type: 'oauth2',
      config: { client_id: 'abc', scopes: ['repo'] },
    });
    t.match(created, { name: 'github', provider_type: 'oauth2', config: { client_id: 'abc', scopes: ['repo'] } });
    t.equal(
      await p.createCredentialProvider({ name: 'github', provider_type: 'oauth2' }),
      undefined,
      'a taken name is refused',
    );
    t.equal((await p.getCredentialProvider('github'))?.provider_type, 'oauth2');
    t.same(
      (await p.listCredentialProviders()).map((x) => x.name),
      ['github'],
    );
    const updated = await p.updateCredentialProvider('github', { config: { client_id: 'xyz' } });
    t.same(updated?.config, { client_id: 'xyz' }, 'update replaces the config');
    t.equal(await p.updateCredentialProvider('nope', { config: {} }), undefined);
    t.equal(await p.deleteCredentialProvider('github'), true);
    t.equal(await p.getCredentialProvider('github'), undefined);
    t.equal(await p.deleteCredentialProvider('github'), false);
  });

  await run(IDENTITY_CASES.secretsHidden, async (t, p) => {
    const secret = 'sk-very-secret-value-1234';
    const made = await p.createCredentialProvider({
      name: 'openai',
      provider_type: 'api_key',
      config: { api_key: secret, nested: { client_secret: secret }, region: 'eu' },
    });
    for (const seen of [made, await p.getCredentialProvider('openai'), ...(await p.listCredentialProviders())]) {
      t.notOk(JSON.stringify(seen).includes(secret), 'the secret is not in the record');
      t.equal(seen?.config.region, 'eu', 'non-secret values are shown');
    }
  });

  await run(IDENTITY_CASES.workloadIdentities, async (t, p) => {
    const w = await p.createWorkloadIdentity({ name: 'agent-1', allowed_return_urls: ['https://app.example/cb'] });
    t.match(w, { name: 'agent-1', allowed_return_urls: ['https://app.example/cb'] });
    t.equal(await p.createWorkloadIdentity({ name: 'agent-1' }), undefined, 'a taken name is refused');
    t.same(
      (await p.listWorkloadIdentities()).map((x) => x.name),
      ['agent-1'],
    );
    t.same((await p.updateWorkloadIdentity('agent-1', { allowed_return_urls: [] }))?.allowed_return_urls, []);
    t.equal(await p.updateWorkloadIdentity('nope', { allowed_return_urls: [] }), undefined);
    t.equal(await p.deleteWorkloadIdentity('agent-1'), true);
    t.equal(await p.getWorkloadIdentity('agent-1'), undefined);
  });

  await run(IDENTITY_CASES.apiKey, async (t, p) => {
    await p.createWorkloadIdentity({ name: 'conf-agent' });
    await p.createCredentialProvider({
      name: 'conf-keys',
      provider_type: 'api_key',
      config: { api_key: 'sk-conf-1234' },
    });
    const wt = await p.getWorkloadToken({ workload_name: 'conf-agent', user_id: 'alice' });
    t.equal(wt.workload_name, 'conf-agent');
    t.ok(wt.workload_token.length > 0, 'a workload token is issued');
    t.same(await p.getApiKey({ credential_provider: 'conf-keys', workload_token: wt.workload_token }), {
      credential_provider: 'conf-keys',
      api_key: 'sk-conf-1234',
    });
    await t.rejects(
      p.getApiKey({ credential_provider: 'conf-keys', workload_token: 'forged' }),
      'a forged workload token is refused',
    );
  });

  await run(IDENTITY_CASES.oauthToken, async (t, p) => {
    if (!opts.oauth2Config)
      return void t.ok(false, 'the OAuth2 case needs `oauth2Config`: pass it or skip the case by name');
    await p.createWorkloadIdentity({ name: 'conf-agent' });
    await p.createCredentialProvider({ name: 'conf-oauth', provider_type: 'oauth2', config: opts.oauth2Config });
    const wt = await p.getWorkloadToken({ workload_name: 'conf-agent' });
    const tok = await p.getToken({
      credential_provider: 'conf-oauth',
      workload_token: wt.workload_token,
      scopes: [],
      auth_flow: 'M2M',
      force_authentication: false,
    });
    t.ok(tok.access_token, 'an access token is returned');
  });

  await run(IDENTITY_CASES.tokenExchange, async (t, p) => {
    if (!opts.exchange || !opts.oauth2Config)
      return void t.ok(
        false,
        'the exchange case needs `exchange` and `oauth2Config`: pass them or skip the case by name',
      );
    await p.createCredentialProvider({ name: 'conf-oauth', provider_type: 'oauth2', config: opts.oauth2Config });
    const tok = await p.getToken(
      {
        credential_provider: 'conf-oauth',
        auth_flow: 'TOKEN_EXCHANGE',
        audience: opts.exchange.audience,
        scopes: [],
        force_authentication: false,
      },
      { bearer: opts.exchange.subjectToken },
    );
    t.ok(tok.access_token, 'an access token is returned');
    await opts.exchange.check(t, tok.access_token!);
    await t.rejects(
      p.getToken({
        credential_provider: 'conf-oauth',
        auth_flow: 'TOKEN_EXCHANGE',
        subject_token: 'not a token!',
        audience: opts.exchange.audience,
        scopes: [],
        force_authentication: false,
      }),
      { statusCode: 400 },
      "a malformed subject token is the caller's error",
    );
  });

  await run(IDENTITY_CASES.workloadJwks, async (t, p) => {
    if (!opts.verifyWorkload || !p.publicJwks)
      return void t.ok(
        false,
        'the JWKS case needs `verifyWorkload` and a provider with publicJwks(): pass it or skip the case by name',
      );
    await p.createWorkloadIdentity({ name: 'conf-agent' });
    const wt = await p.getWorkloadToken({ workload_name: 'conf-agent', user_id: 'alice' });
    const claims = await opts.verifyWorkload(wt.workload_token, await p.publicJwks());
    t.equal(claims.sub, 'conf-agent', 'sub is the workload');
    t.ok(claims.aud, 'an audience is set');
    t.equal(claims.user_id, 'alice', 'the vouched-for user is carried');
    const life = Number(claims.exp) - Number(claims.iat);
    t.ok(life > 0 && life <= 3600, `expiry is short (${life}s)`);
    await t.rejects(
      p.getWorkloadToken({ workload_name: 'nope' }),
      { statusCode: 404 },
      'an unknown workload gets no token',
    );
  });

  await run(IDENTITY_CASES.unknownProvider, async (t, p) => {
    await p.createWorkloadIdentity({ name: 'conf-agent' });
    const wt = await p.getWorkloadToken({ workload_name: 'conf-agent' });
    await t.rejects(
      p.getToken({
        credential_provider: 'nope',
        workload_token: wt.workload_token,
        scopes: [],
        auth_flow: 'M2M',
        force_authentication: false,
      }),
      { statusCode: 404 },
    );
    await t.rejects(p.getApiKey({ credential_provider: 'nope', workload_token: wt.workload_token }), {
      statusCode: 404,
    });
  });

  await run(IDENTITY_CASES.unsupported, async (t, p) => {
    const gated: Array<[string, () => Promise<unknown>]> = [
      [
        'tokens',
        () =>
          p.getToken({
            credential_provider: 'x',
            workload_token: 'w',
            scopes: [],
            auth_flow: 'M2M',
            force_authentication: false,
          }),
      ],
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
