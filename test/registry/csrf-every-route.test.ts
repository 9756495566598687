import t from 'tap';
import type { RouteOptions } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { CSRF_EXEMPT as EXEMPT, UNSAFE_METHODS as UNSAFE } from '../../plugins/registry/auth/csrf.ts';

/**
 * The CSRF check is attached per route, to routes that take an unsafe method
 * (plugins/registry/auth/index.ts). This walks every registry route that does and
 * sends it a cookie-authenticated request without the token: each must refuse it
 * before doing anything, so a route added later cannot slip past the check.
 */
const PASSWORD = 'csrf-walk-password';

t.test('every unsafe registry route refuses a cookie request without the CSRF token', async (t) => {
  const routes: RouteOptions[] = [];
  const app = await makeApp(
    t,
    { registry: { admin_user: 'root', admin_password: PASSWORD } },
    {
      beforeSurfaces: (a) => {
        a.addHook('onRoute', (r) => {
          routes.push(r);
        });
      },
    },
  );
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username: 'root', password: PASSWORD },
  });
  const session = (login.headers['set-cookie'] as string[])
    .find((c) => c.startsWith('mcp_gateway_session='))!
    .split(';')[0];
  const csrf = (await app.inject({ url: '/api/auth/csrf', headers: { cookie: session } })).json().csrf_token as string;

  const targets: Array<{ method: string; url: string }> = [];
  for (const r of routes) {
    // The platform surface authenticates with its own backend, never the registry cookie.
    if (r.url.startsWith('/api/v1') || EXEMPT.has(r.url) || r.url.includes('*')) continue;
    for (const m of [r.method].flat())
      if (UNSAFE.has(m)) targets.push({ method: m, url: r.url.replace(/:(\w+)/g, 'csrf-walk') });
  }
  t.ok(targets.length >= 30, `found the registry's unsafe routes (${targets.length})`);
  for (const { method, url } of targets) {
    const res = await app.inject({ method: method as 'POST', url, headers: { cookie: session }, payload: {} });
    t.equal(res.statusCode, 403, `${method} ${url} without the token`);
    t.equal(res.json().code, 'SB_ERR_AUTH_CSRF', `${method} ${url} names the CSRF check`);
  }
  // With the token the same request gets past the check (to whatever the route answers).
  const withToken = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { cookie: session, 'x-csrf-token': csrf },
    payload: {},
  });
  t.not(withToken.json().code, 'SB_ERR_AUTH_CSRF', 'the token lets the request through');
  // GET routes carry no CSRF stage at all, and still answer a cookie caller.
  t.equal((await app.inject({ url: '/api/auth/me', headers: { cookie: session } })).statusCode, 200);
});
