import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { mintToken, withScope } from '../helpers/registry-auth.ts';
import { routedRequestPath } from '../../plugins/registry/auth/paths.ts';
import { boundPathAllowed, boundRequestRefusal } from '../../plugins/registry/auth/resource-binding.ts';

/**
 * A resource-bound token on the registry's own routes and the gateway: the
 * binding is judged on the same normalised path as /validate judges
 * (plugins/registry/auth/paths.ts), and a path the router could read
 * differently from that check (dot segments, encoded dots, encoded slashes,
 * backslashes, empty segments) is refused outright. Sent over real HTTP with
 * node:http, which puts the path on the wire as written: inject() would
 * resolve the dot segments through the URL parser before the app sees them.
 */

interface Answer {
  status: number;
  body: string;
}

function send(port: number, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    if (method === 'POST') req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    else req.end();
  });
}

function codeOf(a: Answer): string | undefined {
  try {
    return (JSON.parse(a.body) as { code?: string }).code;
  } catch {
    return undefined;
  }
}

// The forms /validate's tests use (test/registry/validate.test.ts), on paths this server routes itself.
const ESCAPES = [
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
  '//fz/mcp',
  '/fz/mcp/.',
  '/fz/mcp/..',
  '/fz/./mcp',
  '/api/servers/fz/../other',
  '/api/servers/fz/%2e%2e/other',
  '/api/servers/fz/..%2Fother',
  '/api/servers/fz%2F..%2Fother',
  '/api/servers//fz',
];

t.test('pure: routedRequestPath refuses what the router could read differently, and normalises the rest', async (t) => {
  for (const p of ESCAPES) t.equal(routedRequestPath(p), undefined, p);
  t.equal(routedRequestPath('/fz/mcp'), '/fz/mcp');
  t.equal(routedRequestPath('/f%7a/mcp'), '/fz/mcp', 'an encoded unreserved character is decoded, as the router does');
  t.equal(routedRequestPath('/fz/mcp/'), '/fz/mcp/');
  t.equal(routedRequestPath('/v0/servers/io.switchboard%2Ffz/versions'), '/v0/servers/io.switchboard%2Ffz/versions');
  t.equal(routedRequestPath('/fz./mcp'), '/fz./mcp', 'a trailing dot is part of the name, not a dot segment');
});

t.test(
  'pure: the binding check of routed requests judges the normalised path and refuses ambiguous ones',
  async (t) => {
    const fz = { type: 'server' as const, id: 'fz' };
    // Why: the raw path alone reads as fz's MCP endpoint (the first /mcp ends the server name).
    t.equal(boundPathAllowed(fz, '/fz/mcp/../../api/tokens/generate'), true, 'the raw path looks like fz');
    for (const p of ESCAPES) t.match(boundRequestRefusal(fz, p), /dot segment/, p);
    t.equal(boundRequestRefusal(fz, '/fz/mcp'), undefined);
    t.equal(boundRequestRefusal(fz, '/f%7a/mcp'), undefined, 'judged as /fz/mcp, as the router reads it');
    t.equal(boundRequestRefusal(fz, '/api/servers/f%7a'), undefined);
    for (const p of ['/fz./mcp', '/fz%2e/mcp', '/FZ/mcp', '/API/tokens/generate', '/api/servers/fz%2Fother'])
      t.match(boundRequestRefusal(fz, p), /cannot be used on/, p);
    const agent = { type: 'agent' as const, id: 'code-reviewer' };
    t.equal(boundRequestRefusal(agent, '/api/agents/code-reviewer'), undefined);
    t.match(boundRequestRefusal(agent, '/api/agents/code-reviewer/%2e%2e/other'), /dot segment/);
    t.match(boundRequestRefusal(agent, '/api/agents/code-reviewer/..%2Fother'), /dot segment/);
  },
);

t.test('a token bound to one server reaches nothing else through the registry or the gateway', async (t) => {
  const app = await makeApp(t);
  await withScope(app, { _id: 'fz-only', server_access: [{ server: 'fz', methods: ['all'], tools: ['all'] }] });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const bound = await mintToken(app, {
    username: 'bea',
    scopes: ['mcp-registry-admin'],
    resource: { type: 'server', id: 'fz' },
  });
  const auth = { authorization: `Bearer ${bound}`, 'content-type': 'application/json' };

  // Most of these match no route at all (the router resolves no dot segments): 404 or 405 before any hook.
  // Any that does reach a route must be refused by the binding.
  for (const path of ESCAPES) {
    for (const method of ['GET', 'POST']) {
      const res = await send(port, method, path, auth);
      const code = codeOf(res);
      const unrouted = code === 'SB_ERR_ROUTE_NOT_FOUND' || code === 'SB_ERR_METHOD_NOT_ALLOWED';
      t.ok(
        unrouted || (res.status === 403 && code === 'SB_ERR_TOKEN_RESOURCE_BOUND'),
        `${method} ${path}: unrouted or refused by the binding (${res.status} ${res.body.slice(0, 160)})`,
      );
    }
  }
  // Routed, with an encoded slash in the parameter: refused as ambiguous, saying what to fix.
  const ambiguous = await send(port, 'GET', '/api/servers/fz%2F..%2Fother', auth);
  t.equal(ambiguous.status, 403);
  t.match(JSON.parse(ambiguous.body), { code: 'SB_ERR_TOKEN_RESOURCE_BOUND', detail: /without dot segments/ });

  // Other names for other resources: trailing dots and case name another server, never fz.
  for (const path of ['/fz./mcp', '/fz%2e/mcp', '/FZ/mcp', '/Fz/mcp', '/fz%2E/mcp', '/api/servers/fz%2Fother']) {
    const res = await send(port, path.startsWith('/api') ? 'GET' : 'POST', path, auth);
    t.equal(res.status, 403, `${path}: refused (${res.status} ${res.body.slice(0, 160)})`);
    t.equal(codeOf(res), 'SB_ERR_TOKEN_RESOURCE_BOUND', `${path}: refused by the binding`);
  }

  // Its own server is still reached, also through an encoded unreserved character: the gateway answers
  // (404: no server named fz is registered), not the binding check.
  for (const path of ['/fz/mcp', '/f%7a/mcp', '/fz/mcp/']) {
    const res = await send(port, 'POST', path, auth);
    t.not(
      codeOf(res),
      'SB_ERR_TOKEN_RESOURCE_BOUND',
      `${path} passes the binding (${res.status} ${res.body.slice(0, 160)})`,
    );
    t.not(res.status, 401, path);
  }
  const own = await send(port, 'GET', '/api/servers/fz', auth);
  t.not(codeOf(own), 'SB_ERR_TOKEN_RESOURCE_BOUND', `its server by API passes the binding (${own.body.slice(0, 160)})`);
  const me = await send(port, 'GET', '/api/auth/me', auth);
  t.equal(me.status, 200, 'introspection stays open');

  // A token without a binding is not affected by the refusal of ambiguous paths (the router answers).
  const unbound = await mintToken(app, { username: 'ada', scopes: ['mcp-registry-admin'] });
  const res = await send(port, 'GET', '/fz/mcp/../../other/mcp', { authorization: `Bearer ${unbound}` });
  t.not(codeOf(res), 'SB_ERR_TOKEN_RESOURCE_BOUND');
});
