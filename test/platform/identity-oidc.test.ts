import t from 'tap';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, errors as joseErrors, jwtVerify } from 'jose';
import { makeApp, tempDir } from '../helpers/app.ts';
import { freePort } from '../fixtures/free-port.ts';
import { startOidcServer } from '../oidc/server.ts';
import { WORKLOAD_KEY_FILE } from '../../providers/oidc/workload-keys.ts';

/** /api/v1/identity on the `oidc` provider against a real oidc-provider issuer. */

const CLIENT_SECRET = 'sb-client-secret-5f2a';
const API_KEY = 'sk-live-api-key-9c4e';

t.test('oidc identity over HTTP: tokens, exchange, API keys, workload tokens, JWKS, bad input', async (t) => {
  const oidc = await startOidcServer({
    clients: { 'sb-client': { secret: CLIENT_SECRET }, 'user-app': { secret: 'user-app-secret' } },
    resources: { 'urn:switchboard': 'switchboard', 'urn:downstream': 'downstream-api' },
    tokenExchange: true,
  });
  t.teardown(() => oidc.close());
  const dataDir = tempDir();
  const deadIssuer = `http://127.0.0.1:${await freePort()}`;
  const app = await makeApp(
    t,
    {
      providers: {
        identity: {
          instances: {
            noop: { type: 'noop' },
            oidc: { type: 'oidc', options: { issuer: oidc.issuer, workload_token_ttl_seconds: 4 } },
            dead: { type: 'oidc', options: { issuer: deadIssuer } },
          },
        },
      },
    },
    { env: { DATA_DIR: dataDir } },
  );
  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: `/api/v1/identity${url}`, payload: payload as object, headers });

  const listing = (await app.inject({ method: 'GET', url: '/api/v1/providers' })).json();
  t.equal(
    listing.identity?.default ?? listing.providers?.identity?.default,
    'oidc',
    'a configured issuer makes oidc the default identity provider',
  );

  t.equal((await post('/workload-identities', { name: 'agent-1' })).statusCode, 201);
  const cp = await post('/credential-providers', {
    name: 'corp',
    provider_type: 'oauth2',
    config: { client_id: 'sb-client', client_secret: CLIENT_SECRET, resource: 'urn:switchboard' },
  });
  t.equal(cp.statusCode, 201);
  t.notMatch(cp.body, CLIENT_SECRET, 'the client secret is not returned');
  const keys = await post('/credential-providers', {
    name: 'keys',
    provider_type: 'api_key',
    config: { api_key: API_KEY },
  });
  t.notMatch(keys.body, API_KEY);
  const raw = JSON.stringify(await app.sb.store.collection('identity_oidc_credential_providers:oidc').get('keys'));
  t.notMatch(raw, API_KEY, 'the API key is encrypted at rest');
  t.match(raw, /\$fernet/);

  // Workload token: signed by Switchboard, verified with the published JWKS, short-lived.
  const wt = await post('/workload-token', { workload_name: 'agent-1', user_id: 'alice' });
  t.equal(wt.statusCode, 200, wt.body);
  const workloadToken: string = wt.json().workload_token;
  const jwksRes = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  t.equal(jwksRes.statusCode, 200);
  t.notOk(JSON.stringify(jwksRes.json()).includes('"d"'), 'only public key material is published');
  const jwks = createLocalJWKSet(jwksRes.json());
  const { payload } = await jwtVerify(workloadToken, jwks, { audience: 'switchboard-workloads' });
  t.match(payload, { sub: 'agent-1', user_id: 'alice', aud: 'switchboard-workloads' });
  t.equal(Number(payload.exp) - Number(payload.iat), 4, 'the expiry is the configured short one');
  t.equal(
    statSync(join(dataDir, WORKLOAD_KEY_FILE)).mode & 0o777,
    0o600,
    'the signing key is kept in DATA_DIR with mode 0600',
  );

  // client_credentials: a token from the issuer, verifiable on the issuer's JWKS.
  // Tokens live 4 s here, so each step below takes a fresh one (a loaded machine can be slow).
  const fresh = async (): Promise<string> =>
    (await post('/workload-token', { workload_name: 'agent-1' })).json().workload_token;
  const m2m = await post('/token', { credential_provider: 'corp', workload_token: await fresh(), auth_flow: 'M2M' });
  t.equal(m2m.statusCode, 200, m2m.body);
  t.notMatch(m2m.body, CLIENT_SECRET);
  const issuerJwks = createRemoteJWKSet(new URL(`${oidc.issuer}/jwks`));
  const m2mClaims = (
    await jwtVerify(m2m.json().access_token, issuerJwks, { issuer: oidc.issuer, audience: 'switchboard' })
  ).payload;
  t.equal(m2mClaims.client_id, 'sb-client', "the token was issued to the credential provider's client");

  // RFC 8693: the caller's bearer token exchanged for the requested audience.
  const subject = await oidc.token('user-app');
  const exchanged = await post(
    '/token',
    { credential_provider: 'corp', auth_flow: 'TOKEN_EXCHANGE', audience: 'downstream-api' },
    { authorization: `Bearer ${subject}` },
  );
  t.equal(exchanged.statusCode, 200, exchanged.body);
  const ex = (
    await jwtVerify(exchanged.json().access_token, issuerJwks, { issuer: oidc.issuer, audience: 'downstream-api' })
  ).payload;
  t.equal(ex.sub, decodeJwt(subject).sub, 'same subject, new audience');

  const malformed = await post('/token', {
    credential_provider: 'corp',
    auth_flow: 'TOKEN_EXCHANGE',
    subject_token: 'not a token!!',
    audience: 'downstream-api',
  });
  t.equal(malformed.statusCode, 400);
  t.equal(malformed.json().code, 'SB_ERR_IDENTITY_SUBJECT_TOKEN_MALFORMED');
  const foreign = await post('/token', {
    credential_provider: 'corp',
    auth_flow: 'TOKEN_EXCHANGE',
    subject_token: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.sig',
    audience: 'downstream-api',
  });
  t.equal(foreign.statusCode, 400, "a subject token the issuer rejects is the caller's to fix");
  t.match(foreign.json().detail, /invalid_grant/);

  const key = await post('/api-key', { credential_provider: 'keys', workload_token: await fresh() });
  t.equal(key.statusCode, 200, key.body);
  t.same(key.json(), { credential_provider: 'keys', api_key: API_KEY });
  const genuine = await fresh();
  const forged = await post('/api-key', {
    credential_provider: 'keys',
    workload_token: `${genuine.slice(0, -6)}${genuine.slice(-6).split('').reverse().join('')}`,
  });
  t.equal(forged.statusCode, 403);

  for (const [url, body] of [
    ['/token', { credential_provider: 'nope' }],
    ['/api-key', { credential_provider: 'nope' }],
  ] as const) {
    const res = await post(url, { ...body, workload_token: await fresh() });
    t.equal(res.statusCode, 404, `${url}: unknown credential provider`);
    t.equal(res.json().code, 'SB_ERR_IDENTITY_PROVIDER_NOT_FOUND');
  }
  t.equal((await post('/workload-token', { workload_name: 'nobody' })).statusCode, 404);

  // An issuer that cannot be reached is a 503 that names it.
  const down = { 'x-provider-identity': 'dead' };
  await post(
    '/credential-providers',
    { name: 'corp', provider_type: 'oauth2', config: { client_id: 'x', client_secret: 'y' } },
    down,
  );
  const unreachable = await post(
    '/token',
    { credential_provider: 'corp', auth_flow: 'TOKEN_EXCHANGE', subject_token: subject, audience: 'downstream-api' },
    down,
  );
  t.equal(unreachable.statusCode, 503);
  t.equal(unreachable.json().code, 'SB_ERR_IDENTITY_ISSUER_UNAVAILABLE');
  t.match(unreachable.json().detail, deadIssuer);

  // After its expiry the workload token no longer verifies, and is refused.
  await new Promise((r) => setTimeout(r, Math.max(0, Number(payload.exp) * 1000 + 1100 - Date.now())));
  await t.rejects(jwtVerify(workloadToken, jwks), joseErrors.JWTExpired, 'expired on the published JWKS');
  t.equal(
    (await post('/api-key', { credential_provider: 'keys', workload_token: workloadToken })).statusCode,
    403,
    'and at Switchboard',
  );
});
