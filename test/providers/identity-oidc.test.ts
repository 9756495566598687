import t from 'tap';
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { ProviderContext } from '../../core/provider.ts';
import { openStore } from '../../core/store.ts';
import { oidcIdentity } from '../../providers/oidc/index.ts';
import { IDENTITY_CASES, identitySuite } from '../conformance/identity.ts';
import type { Runner } from '../conformance/kit.ts';
import { tempDir } from '../helpers/app.ts';
import { startOidcServer } from '../oidc/server.ts';

t.test('oidc identity passes the identity conformance suite against oidc-provider', async (t) => {
  const oidc = await startOidcServer({
    clients: { 'sb-client': { secret: 'sb-client-secret' }, 'user-app': { secret: 'user-app-secret' } },
    resources: { 'urn:switchboard': 'switchboard', 'urn:downstream': 'downstream-api' },
    tokenExchange: true,
  });
  t.teardown(() => oidc.close());
  const issuerKeys = createRemoteJWKSet(new URL(`${oidc.issuer}/jwks`));
  const subject = await oidc.token('user-app');
  const dataDir = tempDir();

  await identitySuite(t as unknown as Runner, {
    make: async () =>
      oidcIdentity.create('oidc', { issuer: oidc.issuer }, {
        store: await openStore({ backend: 'memory' }),
        dataDir,
        logger: {} as never,
        lookup: () => undefined,
      } as ProviderContext),
    oauth2Config: { client_id: 'sb-client', client_secret: 'sb-client-secret', resource: 'urn:switchboard' },
    exchange: {
      subjectToken: subject,
      audience: 'downstream-api',
      check: async (tt, token) => {
        const { payload } = await jwtVerify(token, issuerKeys, { issuer: oidc.issuer, audience: 'downstream-api' });
        tt.equal(payload.sub, decodeJwt(subject).sub, 'the exchanged token keeps the subject');
        tt.match(payload.act, { sub: 'sb-client' }, 'and names the client that acted');
      },
    },
    verifyWorkload: async (token, jwks) =>
      (await jwtVerify(token, createLocalJWKSet(jwks as never))).payload as Record<string, unknown>,
    skip: [{ reason: 'the oidc provider issues every token it declares', tests: [IDENTITY_CASES.unsupported] }],
  });
});
