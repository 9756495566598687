import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { asUser, withScope } from '../helpers/registry-auth.ts';

/**
 * A server's custom headers often carry keys (X-API-Key). Their values are
 * shown like the backend credential: to callers who may change the server,
 * masked for read-only callers, in every view of a server.
 */
t.test('custom header values are masked for read-only users in every server view', async (t) => {
  const app = await makeApp(t, {
    registry: { health: { interval_seconds: 0, timeout_seconds: 0.2, first_check_retry_seconds: [] } },
  });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const reader = await asUser(app, ['mcp-registry-user'], 'rudy');
  await withScope(app, {
    _id: 'keys-editor',
    server_access: [{ server: 'keys', methods: ['all'] }],
    ui_permissions: { list_service: ['keys'], modify_service: ['keys'] },
  });
  const editor = await asUser(app, ['keys-editor'], 'eve');
  const secret = 'sk-live-0123456789abcdef';
  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: {
      name: 'Keys',
      description: 'd',
      path: '/keys',
      proxy_pass_url: 'http://127.0.0.1:9',
      headers: JSON.stringify({ 'X-API-Key': secret, 'X-Tenant': 'acme' }),
    },
  });
  t.equal(reg.statusCode, 201, reg.body);

  const views = [
    '/api/servers/keys',
    '/api/server_details/keys',
    '/api/server_details/all',
    '/v0/servers/io.switchboard%2Fkeys/versions/latest',
  ];
  const headersIn = (url: string, body: Record<string, any>) =>
    url.endsWith('/all') ? body['/keys'].headers : url.startsWith('/v0/') ? body.details.headers : body.headers;
  for (const url of views) {
    const asReader = await app.inject({ url, headers: reader });
    t.equal(asReader.statusCode, 200, `${url}: ${asReader.body}`);
    t.notMatch(asReader.body, secret, `${url}: the value does not reach a read-only user`);
    t.same(
      headersIn(url, asReader.json()),
      { 'X-API-Key': '****cdef', 'X-Tenant': '****' },
      `${url}: names kept, values masked`,
    );
    for (const [who, h] of [
      ['admin', admin],
      ['editor', editor],
    ] as const) {
      const res = await app.inject({ url, headers: h });
      t.equal(res.statusCode, 200, `${who} ${url}: ${res.body}`);
      t.same(
        headersIn(url, res.json()),
        { 'X-API-Key': secret, 'X-Tenant': 'acme' },
        `${who} ${url}: whoever may change the server sees them`,
      );
    }
  }
});
