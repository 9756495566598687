import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { requiredScope, SCOPE_AREAS } from '../../plugins/platform/scopes.ts';
import { apiKeyUsers, keyHeader, type KeyUser } from '../fixtures/api-key-users.ts';
import { makeApp } from '../helpers/app.ts';
import { startOidcServer } from '../oidc/server.ts';

/**
 * Issue 13 item 9: a credential's platform scopes bound what it may do; its
 * user's identity (owner, admin) never widens them. Keys of one user with
 * different scopes stand in for tokens minted with fewer scopes than the user.
 */
const USERS: Record<string, KeyUser> = {
  alice: {},
  'alice-ro': { principal: 'alice', scopes: ['agents:read'] },
  'alice-rw': { principal: 'alice', scopes: ['agents:write'] },
  'alice-mem': { principal: 'alice', scopes: ['memory:write'] },
  'alice-memro': { principal: 'alice', scopes: ['memory:read'] },
  'alice-foreign': { principal: 'alice', scopes: ['openid', 'mcp-registry-user'] },
  'bob-rw': { principal: 'bob', scopes: ['agents:write'] },
  'root-ro': { principal: 'root', admin: true, scopes: ['agents:read'] },
};

const as = (
  app: FastifyInstance,
  key: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
) => app.inject({ method, url, payload: payload as never, headers: keyHeader(key) });

t.test('a down-scoped key of the owner cannot change or delete the agent it may read', async (t) => {
  const app = await makeApp(t, apiKeyUsers(USERS));
  t.equal((await as(app, 'alice', 'POST', '/api/v1/agents', { name: 'helper', model: 'm' })).statusCode, 201);

  t.equal((await as(app, 'alice-ro', 'GET', '/api/v1/agents/helper')).statusCode, 200, 'agents:read reads');
  t.equal((await as(app, 'alice-ro', 'GET', '/api/v1/agents')).json().total, 1, 'agents:read lists');
  for (const [method, payload] of [
    ['PUT', { description: 'x' }],
    ['DELETE', undefined],
  ] as const) {
    const res = await as(app, 'alice-ro', method, '/api/v1/agents/helper', payload);
    t.equal(res.statusCode, 403, `${method} with agents:read only`);
    t.equal(res.json().code, 'SB_ERR_AUTH_SCOPE_MISSING');
    t.match(
      res.json().detail,
      /needs scope 'agents:write'.*agents:read/,
      'detail names the missing and the held scope',
    );
  }
  t.equal(
    (await as(app, 'alice', 'GET', '/api/v1/agents/helper')).json().description,
    '',
    'the refused update changed nothing',
  );

  const admin = await as(app, 'root-ro', 'DELETE', '/api/v1/agents/helper');
  t.equal(admin.statusCode, 403, "an admin's down-scoped key is down-scoped too");
  t.equal(admin.json().code, 'SB_ERR_AUTH_SCOPE_MISSING');

  const other = await as(app, 'bob-rw', 'DELETE', '/api/v1/agents/helper');
  t.equal(other.statusCode, 403, "a scope never grants another user's record");
  t.equal(other.json().code, 'SB_ERR_AGENT_FORBIDDEN');

  t.equal((await as(app, 'alice', 'GET', '/api/v1/agents/helper')).statusCode, 200, 'still there after every refusal');
  t.equal((await as(app, 'alice-rw', 'DELETE', '/api/v1/agents/helper')).statusCode, 200, 'agents:write deletes');
  t.equal((await as(app, 'alice', 'GET', '/api/v1/agents/helper')).statusCode, 404);
});

t.test('scopes are per area; write includes read; read-only POSTs need read', async (t) => {
  const app = await makeApp(t, apiKeyUsers(USERS));
  const agents = await as(app, 'alice-mem', 'GET', '/api/v1/agents');
  t.equal(agents.statusCode, 403, 'memory:write grants nothing on agents');
  t.match(agents.json().detail, /needs scope 'agents:read'/);

  t.equal(
    (await as(app, 'alice-mem', 'POST', '/api/v1/memory/user:alice', { key: 'k', content: 'hello world' })).statusCode,
    201,
    'memory:write writes',
  );
  t.equal(
    (await as(app, 'alice-mem', 'GET', '/api/v1/memory/user:alice/k')).statusCode,
    200,
    'memory:write reads back',
  );
  t.equal((await as(app, 'alice-memro', 'GET', '/api/v1/memory/user:alice/k')).statusCode, 200, 'memory:read reads');
  t.equal(
    (await as(app, 'alice-memro', 'POST', '/api/v1/memory/user:alice/search', { query: 'hello' })).statusCode,
    200,
    'search is a read',
  );
  const write = await as(app, 'alice-memro', 'POST', '/api/v1/memory/user:alice', { key: 'k2', content: 'x' });
  t.equal(write.statusCode, 403, 'memory:read does not write');
  t.equal((await as(app, 'alice', 'GET', '/api/v1/memory/user:alice/k2')).statusCode, 404, 'nothing was stored');
  const del = await as(app, 'alice-memro', 'DELETE', '/api/v1/memory/user:alice/k');
  t.equal(del.statusCode, 403, 'memory:read does not delete');

  for (const key of ['alice-ro', 'alice-memro']) {
    const who = await as(app, key, 'GET', '/api/v1/auth/whoami');
    t.equal(who.statusCode, 200, `${key}: whoami needs no scope`);
    t.equal(who.json().id, 'alice');
    t.equal(
      (await as(app, key, 'GET', '/api/v1/providers')).statusCode,
      200,
      `${key}: the provider listing needs no scope`,
    );
  }
});

t.test('a principal with no platform scope keeps the identity rules alone', async (t) => {
  const app = await makeApp(t, apiKeyUsers(USERS));
  t.equal(
    (await as(app, 'alice', 'POST', '/api/v1/agents', { name: 'a1', model: 'm' })).statusCode,
    201,
    'no scopes at all',
  );
  t.equal(
    (await as(app, 'alice-foreign', 'PUT', '/api/v1/agents/a1', { description: 'x' })).statusCode,
    200,
    'only foreign scopes (openid, registry)',
  );
  t.equal((await as(app, 'alice-foreign', 'DELETE', '/api/v1/agents/a1')).statusCode, 200);
});

t.test('every /api/v1 route has an area scope, except whoami and the provider listings', async (t) => {
  const app = await makeApp(t);
  const doc = (await app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  const unscoped: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (!path.startsWith('/api/v1/')) continue;
    for (const method of Object.keys(methods)) {
      const needed = requiredScope(method.toUpperCase(), path.replace(/\{([^}]+)\}/g, ':$1'));
      if (needed === undefined) unscoped.push(`${method.toUpperCase()} ${path}`);
      else
        t.ok(
          SCOPE_AREAS.some((a) => needed === `${a}:read` || needed === `${a}:write`),
          `${method} ${path}: ${needed}`,
        );
    }
  }
  t.ok(unscoped.length > 0, 'the exempt routes exist');
  t.same(
    unscoped.filter((r) => !/^\S+ \/api\/v1\/(auth|providers)(\/|$)/.test(r)),
    [],
    'only /auth and /providers routes go without a scope',
  );
  t.equal(requiredScope('DELETE', '/api/v1/code-interpreter/sessions/:session_id'), 'code_interpreter:write');
  t.equal(requiredScope('GET', '/api/v1/code-interpreter/sessions'), 'code_interpreter:read');
  t.equal(requiredScope('POST', '/api/v1/memory/:namespace/search'), 'memory:read');
  t.equal(requiredScope('POST', '/api/v1/agents/:name/chat'), 'agents:write');
});

t.test("jwt: a token minted with fewer scopes than its user cannot delete the user's agent", async (t) => {
  const idp = await startOidcServer({
    clients: {
      'alice-cli': { secret: 'alice-secret', claims: { username: 'alice' }, scope: 'agents:read agents:write' },
    },
  });
  t.teardown(() => idp.close());
  const app = await makeApp(t, {
    providers: {
      auth: {
        default: 'oidc',
        instances: {
          oidc: { type: 'jwt', options: { issuer: idp.issuer, audience: 'switchboard', principal_claim: 'username' } },
        },
      },
    },
  });
  const full = { authorization: `Bearer ${await idp.token('alice-cli', { scope: 'agents:read agents:write' })}` };
  const reader = { authorization: `Bearer ${await idp.token('alice-cli', { scope: 'agents:read' })}` };
  t.match((await app.inject({ url: '/api/v1/auth/whoami', headers: reader })).json(), {
    id: 'alice',
    type: 'user',
    scopes: ['agents:read'],
  });

  t.equal(
    (
      await app.inject({ method: 'POST', url: '/api/v1/agents', headers: full, payload: { name: 'mine', model: 'm' } })
    ).json().owner_id,
    'alice',
  );
  t.equal((await app.inject({ url: '/api/v1/agents/mine', headers: reader })).statusCode, 200);
  const del = await app.inject({ method: 'DELETE', url: '/api/v1/agents/mine', headers: reader });
  t.equal(del.statusCode, 403, 'the read-only token of the owner is refused');
  t.equal(del.json().code, 'SB_ERR_AUTH_SCOPE_MISSING');
  t.equal(
    (await app.inject({ url: '/api/v1/agents/mine', headers: full })).statusCode,
    200,
    'the agent is still there',
  );
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/api/v1/agents/mine', headers: full })).statusCode,
    200,
    'the full token deletes',
  );
});
