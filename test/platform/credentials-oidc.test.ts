import t from 'tap';
import { mapAttributes } from '../../plugins/platform/credentials/oidc-source.ts';
import { freePort } from '../fixtures/free-port.ts';
import { makeApp } from '../helpers/app.ts';
import { userAccessToken } from '../oidc/browser.ts';
import { startOidcServer } from '../oidc/server.ts';

/**
 * The `oidc` credentials source (spec 5.7): platform callers signed in with a
 * JWT from a real oidc-provider; their credential attributes are read from
 * the issuer's userinfo endpoint, cached per token, and reported as
 * `source: oidc` by GET /api/v1/credentials/status.
 */

const REDIRECT = 'http://127.0.0.1:9/cb';

t.test('mapping: apg.<service>.<key> attributes become service credentials', async (t) => {
  t.same(
    mapAttributes(
      {
        sub: 'alice',
        email: 'a@x',
        'apg.langfuse.public_key': 'pk-1',
        'apg.Langfuse.secret_key': ['sk-1', 'ignored'],
        'apg.mcp_registry.api_key': 'rk',
        'apg.region': 'eu-west-1',
        apg: { openai: { api_key: 'sk-o' } },
        'apg.': 'nothing',
        'apg.nested.obj': { a: { b: 1 } },
        other: 'x',
      },
      'apg.',
    ),
    {
      langfuse: { public_key: 'pk-1', secret_key: 'sk-1' },
      mcp_registry: { api_key: 'rk' },
      _global: { region: 'eu-west-1' },
      openai: { api_key: 'sk-o' },
      nested: { 'obj.a.b': '1' },
    },
  );
});

t.test('status reports source oidc from the userinfo attributes, cached per token; a dead issuer is 503', async (t) => {
  t.setTimeout(300_000);
  const oidc = await startOidcServer({
    clients: { 'sb-ui': { secret: 'ui-secret-0b7a', redirect_uris: [REDIRECT] } },
    users: {
      alice: {
        email: 'alice@example.test',
        'apg.langfuse.public_key': 'pk-lf-1111',
        'apg.langfuse.secret_key': 'sk-lf-2222',
      },
      bob: { email: 'bob@example.test' },
    },
  });
  t.teardown(() => oidc.close());
  const auth = {
    default: 'oidc',
    instances: { oidc: { type: 'jwt', options: { issuer: oidc.issuer, audience: 'switchboard' } } },
  };
  const app = (credentials: Record<string, unknown>) => makeApp(t, { providers: { auth }, platform: { credentials } });
  const fallback = await app({ server_credentials: 'fallback', oidc: {} });
  const client = { id: 'sb-ui', secret: 'ui-secret-0b7a', redirectUri: REDIRECT };
  const alice = { authorization: `Bearer ${await userAccessToken(oidc.issuer, client, 'alice')}` };
  const bob = { authorization: `Bearer ${await userAccessToken(oidc.issuer, client, 'bob')}` };
  const status = async (a: typeof fallback, headers: Record<string, string>) => {
    const res = await a.inject({ method: 'GET', url: '/api/v1/credentials/status', headers });
    t.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  t.equal((await whoami(fallback, alice)).id, 'alice', 'alice is signed in with her JWT');
  const before = oidc.userinfoCalls();
  t.match(await status(fallback, alice), { source: 'oidc', server_credentials: 'fallback' }, "alice's profile");
  t.equal(oidc.userinfoCalls(), before + 1, 'the userinfo endpoint was read');
  await status(fallback, alice);
  t.equal(oidc.userinfoCalls(), before + 1, 'and cached for the token');
  t.equal((await status(fallback, bob)).source, 'server', 'bob has no credential attributes: the server falls back');
  t.equal(
    (await status(fallback, { ...alice, 'x-cred-langfuse-public-key': 'pk-h' })).source,
    'headers',
    'headers win over the profile',
  );

  // The cache is bounded: with room for one token, alternating callers read the userinfo each time.
  const tiny = await app({ server_credentials: 'fallback', oidc: { cache_max_entries: 1 } });
  const n0 = oidc.userinfoCalls();
  for (const who of [alice, bob, alice, bob]) await status(tiny, who);
  t.equal(oidc.userinfoCalls(), n0 + 4, 'one entry: every change of caller reads again');
  await status(tiny, bob);
  t.equal(oidc.userinfoCalls(), n0 + 4, 'the entry it holds is still served');

  const never = await app({ server_credentials: 'never', oidc: {} });
  t.equal((await status(never, alice)).source, 'oidc');
  t.equal((await status(never, bob)).source, 'none');
  const always = await app({ server_credentials: 'always', oidc: {} });
  t.equal((await status(always, alice)).source, 'server', '`always` uses the server’s whatever the profile holds');
  const off = await app({ server_credentials: 'never' });
  t.equal((await status(off, alice)).source, 'none', 'without platform.credentials.oidc the userinfo is not read');

  // An identity provider that cannot be reached is a 503 that names it.
  const dead = `http://127.0.0.1:${await freePort()}`;
  const deadIssuer = await app({ server_credentials: 'fallback', oidc: { issuer: dead, timeout_ms: 2000 } });
  const res = await deadIssuer.inject({ method: 'GET', url: '/api/v1/credentials/status', headers: alice });
  t.equal(res.statusCode, 503);
  t.equal(res.json().code, 'SB_ERR_CREDENTIALS_IDP_UNAVAILABLE');
  t.match(res.json().detail, dead);
  const deadUserinfo = await app({
    server_credentials: 'fallback',
    oidc: { userinfo_url: `${dead}/userinfo`, timeout_ms: 2000 },
  });
  const res2 = await deadUserinfo.inject({ method: 'GET', url: '/api/v1/credentials/status', headers: bob });
  t.equal(res2.statusCode, 503);
  t.match(res2.json().detail, `${dead}/userinfo`);
  t.notMatch(res2.body, bob.authorization.slice(7, 40), 'the token is not in the answer');
});

async function whoami(app: Awaited<ReturnType<typeof makeApp>>, headers: Record<string, string>) {
  return (await app.inject({ method: 'GET', url: '/api/v1/auth/whoami', headers })).json();
}
