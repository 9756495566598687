import t from 'tap';
import { SignJWT } from 'jose';
import { makeApp } from '../helpers/app.ts';
import { adminBasic, asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import { registryAuthOf } from '../../plugins/registry/auth/index.ts';

const rpc = (method: string, tool?: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: tool ? { name: tool, arguments: {} } : {} });

t.test('/validate', async (t) => {
  const app = await makeApp(t, { registry: { admin_password: 'admin-pass-for-tests' } });
  const restricted = await mintToken(app, { username: 'rita', groups: ['mcp-servers-restricted'] });
  const reader = await mintToken(app, { username: 'rudy', scopes: ['mcp-registry-user'] });
  const admin = await mintToken(app, { username: 'ada', scopes: ['mcp-registry-admin'] });

  const validate = (headers: Record<string, string>) => app.inject({ url: '/validate', headers });

  t.test('granted: server, method and tool in scope; every user-context header', async (t) => {
    const res = await validate({
      authorization: `Bearer ${restricted}`,
      'x-original-url': 'https://edge.example/currenttime/mcp',
      'x-original-method': 'POST',
      'x-body': rpc('tools/call', 'current_time_by_timezone'),
    });
    t.equal(res.statusCode, 200);
    t.same(res.json(), {
      valid: true,
      username: 'rita',
      client_id: null,
      scopes: ['mcp-servers-restricted'],
      method: 'tools/call',
      groups: ['mcp-servers-restricted'],
      server_name: 'currenttime',
      tool_name: 'current_time_by_timezone',
    });
    t.equal(res.headers['x-user'], 'rita');
    t.equal(res.headers['x-username'], 'rita');
    t.equal(res.headers['x-client-id'], '');
    t.equal(res.headers['x-scopes'], 'mcp-servers-restricted');
    t.equal(res.headers['x-groups'], 'mcp-servers-restricted');
    t.equal(res.headers['x-auth-method'], 'self_signed');
    t.equal(res.headers['x-server-name'], 'currenttime');
    t.equal(res.headers['x-tool-name'], 'current_time_by_timezone');
  });

  t.test('denied: a tool outside the list, a method outside the list, another server', async (t) => {
    let res = await validate({
      authorization: `Bearer ${restricted}`,
      'x-original-url': '/currenttime/mcp',
      'x-body': rpc('tools/call', 'delete_everything'),
    });
    t.equal(res.statusCode, 403);
    t.match(res.json().detail, /^Access denied to currenttime\.tools\/call/);
    res = await validate({
      authorization: `Bearer ${restricted}`,
      'x-original-url': '/currenttime/mcp',
      'x-body': rpc('resources/list'),
    });
    t.equal(res.statusCode, 403);
    t.equal(res.json().detail, 'Access denied to currenttime.resources/list');
    res = await validate({
      authorization: `Bearer ${restricted}`,
      'x-original-url': '/fininfo/mcp',
      'x-body': rpc('tools/list'),
    });
    t.equal(res.statusCode, 403);
    t.equal(res.json().detail, 'Access denied to fininfo.tools/list');
    t.equal(res.json().code, 'SB_ERR_VALIDATE_DENIED');
    // No body: a server outside every rule is still refused.
    res = await validate({ authorization: `Bearer ${restricted}`, 'x-original-url': '/fininfo/sse' });
    t.equal(res.statusCode, 403);
  });

  t.test('read-only users list tools everywhere but call none; admins call anything', async (t) => {
    let res = await validate({
      authorization: `Bearer ${reader}`,
      'x-original-url': '/anything/mcp',
      'x-body': rpc('tools/list'),
    });
    t.equal(res.statusCode, 200);
    res = await validate({
      authorization: `Bearer ${reader}`,
      'x-original-url': '/anything/mcp',
      'x-body': rpc('tools/call', 'x'),
    });
    t.equal(res.statusCode, 403);
    res = await validate({
      authorization: `Bearer ${admin}`,
      'x-original-url': '/anything/deep/path/mcp',
      'x-body': rpc('tools/call', 'x'),
    });
    t.equal(res.statusCode, 200);
    t.equal(res.json().server_name, 'anything/deep/path');
  });

  t.test('server name is the path without /mcp, /sse, /messages', async (t) => {
    for (const [url, name] of [
      ['/currenttime/mcp', 'currenttime'],
      ['/currenttime/sse', 'currenttime'],
      ['/currenttime/messages/?session_id=1', 'currenttime'],
      ['/currenttime', 'currenttime'],
      // Absolute forms: plain ones are read directly, unusual ones (dot segments, credentials, encodings) by the URL parser.
      ['https://edge.example:8443/currenttime/mcp?x=1#f', 'currenttime'],
      ['http://[::1]:80/currenttime/sse', 'currenttime'],
      ['https://edge.example/other/../currenttime/mcp', 'currenttime'],
      ['https://u:p@edge.example/currenttime/mcp', 'currenttime'],
    ]) {
      const res = await validate({
        authorization: `Bearer ${restricted}`,
        'x-original-uri': url,
        'x-body': rpc('tools/list'),
      });
      t.equal(res.statusCode, 200, url);
      t.equal(res.headers['x-server-name'], name, url);
    }
  });

  t.test('/api paths get no server check', async (t) => {
    const res = await validate({
      authorization: `Bearer ${restricted}`,
      'x-original-url': '/api/servers',
      'x-original-method': 'GET',
    });
    t.equal(res.statusCode, 200);
    t.equal(res.json().server_name, null);
    t.equal(res.json().method, 'GET');
  });

  t.test(
    'the registry paths outside /api (v0, well-known, older pages) are no MCP servers; with an MCP suffix they are',
    async (t) => {
      // rita may reach one server only: judging /v0/servers as a server named "v0/servers" would refuse her the catalog.
      for (const url of [
        '/v0/servers',
        '/v0/servers/io.switchboard%2Fcurrenttime/versions',
        '/.well-known/mcp-servers',
        '/health',
        '/toggle/currenttime',
        '/edit/currenttime',
        '/refresh/currenttime',
        '/register',
      ]) {
        const res = await validate({
          authorization: `Bearer ${restricted}`,
          'x-original-url': url,
          'x-original-method': 'GET',
        });
        t.equal(res.statusCode, 200, url);
        t.equal(res.json().server_name, null, url);
      }
      const res = await validate({
        authorization: `Bearer ${restricted}`,
        'x-original-url': '/edit/mcp',
        'x-body': rpc('tools/list'),
      });
      t.equal(res.statusCode, 403, 'a server named "edit" is still judged as one');
    },
  );

  t.test('token sources: X-Authorization wins over Authorization; session cookie last', async (t) => {
    let res = await validate({
      'x-authorization': `Bearer ${restricted}`,
      authorization: `Bearer ${admin}`,
      'x-original-url': '/other/mcp',
      'x-body': rpc('tools/list'),
    });
    t.equal(res.statusCode, 403, 'judged as the X-Authorization user');
    res = await validate({
      'x-authorization': `Bearer ${admin}`,
      authorization: 'Bearer garbage',
      'x-original-url': '/other/mcp',
      'x-body': rpc('tools/list'),
    });
    t.equal(res.statusCode, 200);
    const login = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'admin', password: 'admin-pass-for-tests' },
    });
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    res = await validate({ cookie, 'x-original-url': '/other/mcp', 'x-body': rpc('tools/call', 'y') });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-auth-method'], 'session_cookie');
  });

  t.test('JSON-RPC from the request body (POST) and batches are all checked', async (t) => {
    let res = await app.inject({
      method: 'POST',
      url: '/validate',
      headers: { authorization: `Bearer ${restricted}`, 'x-original-url': '/currenttime/mcp' },
      payload: JSON.parse(rpc('tools/call', 'current_time_by_timezone')),
    });
    t.equal(res.statusCode, 200);
    t.equal(res.json().tool_name, 'current_time_by_timezone');
    const batch = JSON.stringify([JSON.parse(rpc('tools/list')), JSON.parse(rpc('tools/call', 'nope'))]);
    res = await validate({
      authorization: `Bearer ${restricted}`,
      'x-original-url': '/currenttime/mcp',
      'x-body': batch,
    });
    t.equal(res.statusCode, 403);
  });

  t.test('X-Body is read as JSON.parse reads it: escapes and duplicate keys decide nothing else', async (t) => {
    const call = (body: string) =>
      validate({
        authorization: `Bearer ${restricted}`,
        'x-original-url': 'https://edge.example/currenttime/mcp',
        'x-body': body,
      });
    // An escaped key still names the method and the tool: no way past the tool list.
    let res = await call(
      '{"jsonrpc":"2.0","id":1,"m\\u0065thod":"tools/call","params":{"n\\u0061me":"delete_everything"}}',
    );
    t.equal(res.statusCode, 403);
    t.equal(res.json().detail, 'Access denied to currenttime.tools/call');
    // The last of duplicate keys wins, as in the MCP server's own parse.
    res = await call('{"method":"tools/call","params":{"name":"current_time_by_timezone","name":"delete_everything"}}');
    t.equal(res.statusCode, 403);
    res = await call('{"method":"tools/call","params":{"name":"delete_everything","name":"current_time_by_timezone"}}');
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-tool-name'], 'current_time_by_timezone');
    res = await call('{"method":"tools/list","method":"tools/call","params":{"name":"delete_everything"}}');
    t.equal(res.statusCode, 403);
    // Base64 JSON text is still read.
    res = await call(Buffer.from('{"method":"tools/call","params":{"name":"delete_everything"}}').toString('base64'));
    t.equal(res.statusCode, 403);
  });

  t.test('one original URL, judged the same each time it comes back and apart from its neighbours', async (t) => {
    const url = 'https://edge.example/currenttime/mcp?session=1';
    for (let i = 0; i < 3; i++) {
      const ok = await validate({
        authorization: `Bearer ${restricted}`,
        'x-original-url': url,
        'x-body': rpc('tools/list'),
      });
      t.equal(ok.statusCode, 200);
      t.equal(ok.headers['x-server-name'], 'currenttime');
      const other = await validate({
        authorization: `Bearer ${restricted}`,
        'x-original-url': 'https://edge.example/fininfo/mcp?session=1',
        'x-body': rpc('tools/list'),
      });
      t.equal(other.statusCode, 403);
      t.equal(other.json().detail, 'Access denied to fininfo.tools/list');
    }
  });

  t.test('401 with WWW-Authenticate: Bearer for missing, forged, expired and pre-token_kind tokens', async (t) => {
    let res = await validate({ 'x-original-url': '/currenttime/mcp' });
    t.equal(res.statusCode, 401);
    t.equal(res.headers['www-authenticate'], 'Bearer');
    res = await validate({ authorization: 'Bearer not-a-jwt' });
    t.equal(res.statusCode, 401);
    const forged = await new SignJWT({ preferred_username: 'eve', scope: 'mcp-registry-admin', token_kind: 'user' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('mcp-auth-server')
      .setAudience('mcp-registry')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('not-the-secret-key-at-all'));
    res = await validate({ authorization: `Bearer ${forged}` });
    t.equal(res.statusCode, 401);
    t.equal(res.headers['www-authenticate'], 'Bearer');
    const key = registryAuthOf(app).authenticator.secretKey;
    const legacy = await new SignJWT({ preferred_username: 'old', scope: 'mcp-registry-admin', groups: [] })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('mcp-auth-server')
      .setAudience('mcp-registry')
      .setExpirationTime('1h')
      .sign(key);
    res = await validate({ authorization: `Bearer ${legacy}` });
    t.equal(res.statusCode, 401);
    t.match(res.json().detail, /mint a new one/);
    const expired = await new SignJWT({ preferred_username: 'old', scope: 'mcp-registry-admin', token_kind: 'user' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('mcp-auth-server')
      .setAudience('mcp-registry')
      .setIssuedAt(1000)
      .setExpirationTime(2000)
      .sign(key);
    res = await validate({ authorization: `Bearer ${expired}` });
    t.equal(res.statusCode, 401);
    t.match(res.json().detail, /expired/);
    const wrongAud = await new SignJWT({ preferred_username: 'x', scope: 'mcp-registry-admin', token_kind: 'user' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('mcp-auth-server')
      .setAudience('someone-else')
      .setExpirationTime('1h')
      .sign(key);
    res = await validate({ authorization: `Bearer ${wrongAud}` });
    t.equal(res.statusCode, 401);
    res = await validate({ authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` });
    t.equal(res.statusCode, 401);
    res = await validate({ ...adminBasic(app), 'x-original-url': '/x/mcp', 'x-body': rpc('tools/call', 'z') });
    t.equal(res.statusCode, 200, 'the admin over Basic passes');
  });

  t.test('resource-bound tokens: their own server only, never the rule-6 families', async (t) => {
    const bound = await mintToken(app, {
      username: 'ada',
      scopes: ['mcp-registry-admin'],
      resource: { type: 'server', id: 'currenttime' },
    });
    const h = (url: string, body?: string) =>
      validate({ authorization: `Bearer ${bound}`, 'x-original-url': url, ...(body ? { 'x-body': body } : {}) });
    t.equal((await h('/currenttime/mcp', rpc('tools/call', 'anything'))).statusCode, 200);
    t.equal((await h('/api/servers/currenttime')).statusCode, 200);
    t.equal((await h('/api/auth/me')).statusCode, 200, 'introspection stays open');
    t.equal((await h('/fininfo/mcp', rpc('tools/list'))).statusCode, 403, 'another server');
    t.equal((await h('/currenttime2/mcp', rpc('tools/list'))).statusCode, 403, 'a prefix-sharing server');
    t.equal((await h('/api/servers/fininfo')).statusCode, 403, 'another server by API');
    t.equal((await h('/api/agents/currenttime')).statusCode, 403, 'an agent with the same id');
    for (const p of [
      '/api/tokens/generate',
      '/api/admin/tokens',
      '/api/internal/list',
      '/api/search/semantic',
      '/api/federation/sync',
      '/api/config',
      '/api/peers',
      '/api/registry/x',
      '/v0/servers',
      '/api/auth/logout',
      '/api/scopes',
      '/api/servers',
      '/toggle/fininfo',
      '/edit/fininfo',
    ]) {
      const res = await h(p);
      t.equal(res.statusCode, 403, p);
    }
    t.equal((await h('/toggle/currenttime')).statusCode, 200, 'the older per-server pages of its own server');
    t.equal((await h('/refresh/currenttime')).statusCode, 200);
    t.equal((await h('/refresh/fininfo')).statusCode, 403);
    // Public endpoints answer the same with or without a token: a bound one is ignored there, not refused.
    for (const p of ['/.well-known/mcp-servers', '/health', '/api/auth/providers', '/api/auth/login', '/login']) {
      t.equal((await h(p)).statusCode, 200, `${p} is public`);
    }
    const agentBound = await mintToken(app, {
      username: 'ada',
      scopes: ['mcp-registry-admin'],
      resource: { type: 'agent', id: 'code-reviewer' },
    });
    let res = await validate({ authorization: `Bearer ${agentBound}`, 'x-original-url': '/api/agents/code-reviewer' });
    t.equal(res.statusCode, 200);
    res = await validate({
      authorization: `Bearer ${agentBound}`,
      'x-original-url': '/code-reviewer/mcp',
      'x-body': rpc('tools/list'),
    });
    t.equal(res.statusCode, 403, 'an agent-bound token is no MCP server token');
  });

  t.test('repeated calls get the same answer, and each call its own: tool, method, server, caller', async (t) => {
    const ask = (token: string, url: string, body?: string) =>
      validate({
        authorization: `Bearer ${token}`,
        'x-original-url': url,
        'x-original-method': 'POST',
        ...(body === undefined ? {} : { 'x-body': body }),
      });
    const first = await ask(admin, '/anything/mcp', rpc('tools/call', 'alpha'));
    const again = await ask(admin, '/anything/mcp', rpc('tools/call', 'alpha'));
    t.equal(again.body, first.body);
    t.match(first.json(), { username: 'ada', method: 'tools/call', server_name: 'anything', tool_name: 'alpha' });
    t.match((await ask(admin, '/anything/mcp', rpc('tools/call', 'beta'))).json(), { tool_name: 'beta' });
    t.match((await ask(admin, '/anything/mcp', rpc('tools/list'))).json(), { method: 'tools/list', tool_name: null });
    t.match((await ask(admin, '/other/mcp', rpc('tools/call', 'alpha'))).json(), {
      server_name: 'other',
      tool_name: 'alpha',
    });
    // No body: the method comes from X-Original-Method; no URL: no server.
    t.match((await ask(admin, '/anything/mcp')).json(), { method: 'POST', server_name: 'anything', tool_name: null });
    t.match((await validate({ authorization: `Bearer ${admin}` })).json(), {
      method: null,
      server_name: null,
      tool_name: null,
    });
    // An empty tool name is a name, not a missing one.
    const emptyName = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: '' } });
    t.match((await ask(admin, '/anything/mcp', emptyName)).json(), { tool_name: '' });
    const other = await mintToken(app, { username: 'adam', scopes: ['mcp-registry-admin'] });
    t.match((await ask(other, '/anything/mcp', rpc('tools/call', 'alpha'))).json(), {
      username: 'adam',
      tool_name: 'alpha',
    });
    // Past the per-caller bound (256 distinct calls) the answers start over and stay right.
    for (let i = 0; i < 300; i++) {
      const r = await ask(admin, '/anything/mcp', rpc('tools/call', `tool-${i}`));
      if (r.json().tool_name !== `tool-${i}`) t.fail(`call ${i} answered ${r.body}`);
    }
    t.equal((await ask(admin, '/anything/mcp', rpc('tools/call', 'alpha'))).body, first.body);
    // A denial is decided per request, whatever was answered before.
    t.equal((await ask(restricted, '/currenttime/mcp', rpc('tools/call', 'current_time_by_timezone'))).statusCode, 200);
    t.equal((await ask(restricted, '/currenttime/mcp', rpc('tools/call', 'delete_everything'))).statusCode, 403);
  });

  t.test('scope changes apply to cached tokens', async (t) => {
    const token = await mintToken(app, { username: 'zed', scopes: ['temp-scope'] });
    let res = await validate({
      authorization: `Bearer ${token}`,
      'x-original-url': '/weather/mcp',
      'x-body': rpc('tools/list'),
    });
    t.equal(res.statusCode, 403, 'unknown scope grants nothing');
    await withScope(app, { _id: 'temp-scope', server_access: [{ server: 'weather', methods: ['tools/list'] }] });
    res = await validate({
      authorization: `Bearer ${token}`,
      'x-original-url': '/weather/mcp',
      'x-body': rpc('tools/list'),
    });
    t.equal(res.statusCode, 200, 'granted once the scope exists');
    res = await validate({
      authorization: `Bearer ${token}`,
      'x-original-url': '/weather/mcp',
      'x-body': rpc('tools/call', 'forecast'),
    });
    t.equal(res.statusCode, 403, 'no tools list and no "all" method: no tool calls');
  });
});

t.test('user-context headers stay valid for any username', async (t) => {
  const app = await makeApp(t);
  const token = await mintToken(app, { username: '山田 José\u0007', scopes: ['mcp-registry-admin'] });
  const res = await app.inject({
    url: '/validate',
    headers: { authorization: `Bearer ${token}`, 'x-original-url': '/a/mcp' },
  });
  t.equal(res.statusCode, 200);
  t.equal(res.json().username, '山田 José\u0007', 'the JSON body keeps the name as is');
  t.equal(res.headers['x-user'], '%E5%B1%B1%E7%94%B0 Jos%C3%A9');
});

t.test('asUser helper gives working headers', async (t) => {
  const app = await makeApp(t);
  const res = await app.inject({
    url: '/validate',
    headers: { ...(await asUser(app, ['mcp-registry-admin'])), 'x-original-url': '/a/mcp' },
  });
  t.equal(res.statusCode, 200);
});

t.test('dot segments, encoded dots and encoded slashes cannot move a path out of the server it names', async (t) => {
  const app = await makeApp(t);
  await withScope(app, { _id: 'fz-only', server_access: [{ server: 'fz', methods: ['all'], tools: ['all'] }] });
  const bound = await mintToken(app, {
    username: 'bea',
    scopes: ['mcp-registry-admin'],
    resource: { type: 'server', id: 'fz' },
  });
  const scoped = await mintToken(app, { username: 'sam', scopes: ['fz-only'] });
  const ask = (token: string, url: string, header = 'x-original-url') =>
    app.inject({
      url: '/validate',
      headers: { authorization: `Bearer ${token}`, [header]: url, 'x-body': rpc('tools/list') },
    });

  const escapes = [
    '/fz/mcp/../../api/tokens/generate',
    '/fz/mcp/../../other/mcp',
    '/fz/mcp/%2e%2e/%2e%2e/other/mcp',
    '/fz/mcp/%2E%2E/%2e./api/tokens/generate',
    '/fz/mcp/.%2E/.%2e/other/mcp',
    '/fz/mcp/..%2f..%2fother/mcp',
    '/fz/mcp/..%2F..%2Fapi/tokens/generate',
    '/fz/mcp/%2e%2e%2f%2e%2e%2fother/mcp',
    '/fz/mcp/..%5c..%5cother/mcp',
    '/fz/mcp/..;/..;/other/mcp',
    '/fz/mcp\\..\\..\\other/mcp',
    '/fz//mcp/../../other/mcp',
  ];
  for (const path of escapes) {
    for (const url of [path, `https://edge.example${path}`, `http://edge.example:8080${path}?q=1`]) {
      for (const header of ['x-original-url', 'x-original-uri']) {
        const b = await ask(bound, url, header);
        t.equal(b.statusCode, 403, `bound to fz: ${header} ${url}`);
        t.match(b.json(), { code: /^SB_ERR_VALIDATE_/ });
        // Paths that land on an /api route are the registry's own (it authorises those itself); MCP paths are judged by scope.
        if (!/api/.test(path))
          t.equal((await ask(scoped, url, header)).statusCode, 403, `scoped to fz: ${header} ${url}`);
      }
    }
  }
  const encodedSlash = await ask(bound, '/fz/mcp/..%2f..%2fother/mcp');
  t.match(encodedSlash.json(), { code: 'SB_ERR_VALIDATE_PATH', detail: /encoded slash/ });

  // Normalised paths that stay on fz are still granted, and the server is read from the normalised path.
  for (const url of [
    '/fz/mcp',
    '/fz/mcp/./',
    '/other/mcp/../../fz/mcp',
    '/other/%2e%2e/fz/mcp',
    '/f%7a/mcp',
    'https://edge.example/x/../fz/mcp?next=../../other',
    '/fz/mcp?x=..%2f..',
  ]) {
    for (const token of [bound, scoped]) {
      const res = await ask(token, url);
      t.equal(res.statusCode, 200, `${url}: ${res.body}`);
      t.equal(res.headers['x-server-name'], 'fz', url);
    }
  }
  // An encoded slash with no dot segment is kept encoded, as the v0 API's server names need.
  const v0 = await ask(scoped, '/v0/servers/io.switchboard%2Ffz/versions');
  t.equal(v0.statusCode, 200);
  t.equal(v0.json().server_name, null);
});
