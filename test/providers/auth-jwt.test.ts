import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { startOidcServer, type OidcServer } from '../oidc/server.ts';

const CLIENTS = {
  'svc-reader': {
    secret: 'reader-secret',
    claims: { groups: ['research', 'staff'] },
    scope: 'memory:read memory:write',
  },
  'svc-admin': { secret: 'admin-secret', claims: { groups: ['platform-admins'] } },
  'svc-short': { secret: 'short-secret', ttl_seconds: 1 },
};

function jwtConfig(idp: OidcServer, extra: Record<string, unknown> = {}) {
  return {
    providers: {
      auth: {
        default: 'oidc',
        instances: {
          oidc: {
            type: 'jwt',
            options: { issuer: idp.issuer, audience: 'switchboard', admin_groups: ['platform-admins'], ...extra },
          },
        },
      },
    },
  };
}

t.test('jwt against a real OpenID provider', async (t) => {
  const idp = await startOidcServer({
    clients: CLIENTS,
    resources: { 'urn:switchboard': 'switchboard', 'urn:other': 'other-api' },
    issuerPath: '/realms/test',
  });
  t.teardown(() => idp.close());
  const app = await makeApp(t, jwtConfig(idp));
  const whoami = (token: string) =>
    app.inject({ url: '/api/v1/auth/whoami', headers: { authorization: `Bearer ${token}` } });

  await t.test('a client-credentials token maps sub, groups and scopes', async (t) => {
    const res = await whoami(await idp.token('svc-reader', { scope: 'memory:read' }));
    t.equal(res.statusCode, 200);
    t.same(res.json(), {
      id: 'svc-reader',
      type: 'service',
      is_admin: false,
      groups: ['research', 'staff'],
      scopes: ['memory:read'],
    });
  });

  await t.test('admin_groups make an admin', async (t) => {
    const res = await whoami(await idp.token('svc-admin'));
    t.equal(res.statusCode, 200);
    t.equal(res.json().is_admin, true);
  });

  await t.test('X-Api-Key carries a JWT too', async (t) => {
    const res = await app.inject({
      url: '/api/v1/auth/whoami',
      headers: { 'x-api-key': await idp.token('svc-reader') },
    });
    t.equal(res.json().id, 'svc-reader');
  });

  await t.test('wrong audience is 401', async (t) => {
    const res = await whoami(await idp.token('svc-reader', { resource: 'urn:other' }));
    t.equal(res.statusCode, 401);
    t.equal(res.headers['www-authenticate'], 'Bearer');
    t.equal(res.json().detail, 'Invalid or missing credentials');
  });

  await t.test('an expired token is 401', async (t) => {
    const token = await idp.token('svc-short');
    // The same token is accepted while it lives, so the refusal below is the expiry and nothing else.
    t.equal((await whoami(token)).statusCode, 200);
    await sleep(2100);
    const res = await whoami(token);
    t.equal(res.statusCode, 401);
    t.equal(res.json().code, 'SB_ERR_AUTH_INVALID');
  });

  await t.test('tampered, unsigned and garbage tokens are 401', async (t) => {
    const good = await idp.token('svc-reader');
    const [h, p, s] = good.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'root', groups: ['platform-admins'] })).toString('base64url')}.${s}`;
    const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${p}.`;
    for (const [why, token] of [
      ['forged claims', forged],
      ['alg none', none],
      ['not a JWT', 'hello'],
      ['three dots of junk', 'a.b.c'],
    ]) {
      const res = await whoami(token);
      t.equal(res.statusCode, 401, why);
    }
    t.equal((await app.inject({ url: '/api/v1/auth/whoami' })).statusCode, 401, 'no token');
  });

  await t.test('/auth/config publishes issuer and audience, exempt from auth', async (t) => {
    const res = await app.inject({ url: '/auth/config' });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { backend: 'jwt', enabled: true, issuer: idp.issuer, audience: 'switchboard' });
  });

  await t.test('readiness probes the IdP', async (t) => {
    const res = await app.inject({
      url: '/api/v1/providers/status',
      headers: { authorization: `Bearer ${await idp.token('svc-admin')}` },
    });
    t.equal(res.json().checks['auth/oidc'], 'ok');
  });
});

t.test('jwt: a token signed by another issuer is refused', async (t) => {
  const idp = await startOidcServer({ clients: CLIENTS });
  const rogue = await startOidcServer({ clients: CLIENTS });
  t.teardown(() => Promise.all([idp.close(), rogue.close()]));
  // A genuine token from a different IdP: its issuer is not the configured one.
  const app = await makeApp(t, jwtConfig(idp));
  const res = await app.inject({
    url: '/api/v1/auth/whoami',
    headers: { authorization: `Bearer ${await rogue.token('svc-admin')}` },
  });
  t.equal(res.statusCode, 401);
});

t.test('jwt: groups and scopes claims are configurable; dotted claims walk objects', async (t) => {
  const idp = await startOidcServer({
    clients: {
      kc: {
        secret: 'kc-secret',
        claims: { realm_access: { roles: ['ops', 'viewer'] }, scp: ['memory.read', 'llm.call'] },
      },
    },
  });
  t.teardown(() => idp.close());
  const app = await makeApp(
    t,
    jwtConfig(idp, { groups_claim: 'realm_access.roles', scopes_claim: 'scp', admin_scopes: ['llm.call'] }),
  );
  const res = await app.inject({
    url: '/api/v1/auth/whoami',
    headers: { authorization: `Bearer ${await idp.token('kc')}` },
  });
  t.same(res.json(), {
    id: 'kc',
    type: 'service',
    is_admin: true,
    groups: ['ops', 'viewer'],
    scopes: ['memory.read', 'llm.call'],
  });
});

t.test('jwt: an unreachable IdP is 503 naming it, and recovers', async (t) => {
  const idp = await startOidcServer({ clients: CLIENTS });
  const token = await idp.token('svc-reader');
  const issuer = idp.issuer;
  await idp.close();
  const app = await makeApp(t, {
    providers: {
      auth: {
        default: 'oidc',
        instances: { oidc: { type: 'jwt', options: { issuer, audience: 'switchboard', timeout_ms: 1000 } } },
      },
    },
  });
  const res = await app.inject({ url: '/api/v1/auth/whoami', headers: { authorization: `Bearer ${token}` } });
  t.equal(res.statusCode, 503);
  t.equal(res.json().code, 'SB_ERR_AUTH_IDP_UNAVAILABLE');
  t.match(res.json().detail, issuer);
  t.notMatch(res.body, token, 'the token is not echoed');

  // The IdP comes back on the same address: discovery is retried, not cached as a failure.
  const again = await startOidcServer({
    clients: CLIENTS,
    port: new URL(issuer).port ? Number(new URL(issuer).port) : undefined,
  });
  t.teardown(() => again.close());
  const ok = await app.inject({
    url: '/api/v1/auth/whoami',
    headers: { authorization: `Bearer ${await again.token('svc-reader')}` },
  });
  t.equal(ok.statusCode, 200);
  t.equal(ok.json().id, 'svc-reader');
});

t.test('jwt: issuer and audience are required', async (t) => {
  await t.rejects(
    makeApp(t, {
      providers: {
        auth: { default: 'oidc', instances: { oidc: { type: 'jwt', options: { issuer: 'http://127.0.0.1:1' } } } },
      },
    }),
    /audience/,
  );
  await t.rejects(
    makeApp(t, {
      providers: { auth: { default: 'oidc', instances: { oidc: { type: 'jwt', options: { audience: 'x' } } } } },
    }),
    /issuer/,
  );
});
