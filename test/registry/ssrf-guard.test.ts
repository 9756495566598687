import { createServer } from 'node:http';
import t, { type Test } from 'tap';
import { makeApp } from '../helpers/app.ts';
import { listenOnLoopback } from '../helpers/registry-servers.ts';
import { asUser, withScope } from '../helpers/registry-auth.ts';
import { startControlledServer } from '../mcp/controlled-server.ts';
import { fakeDns } from '../fixtures/fake-dns.ts';
import { FORM_NAMES, HOST_FORMS } from '../fixtures/ssrf-forms.ts';

/**
 * The SSRF guard through the whole registry: every spelling of a refused
 * address in every field that takes a URL, redirects to such addresses, and
 * names that answer one address to the registration check and another when
 * the connection opens (DNS rebinding, simulated: there is no network here).
 */

const REFUSED_BACKEND = HOST_FORMS.filter((f) => f.cls === 'metadata' || f.cls === 'link-local');
const NOT_PUBLIC = HOST_FORMS.filter((f) => f.cls !== 'public');

async function setup(t: Test, registry: Record<string, unknown> = {}, dns = fakeDns(FORM_NAMES)) {
  const app = await makeApp(
    t,
    {
      registry: {
        health: { interval_seconds: 0, timeout_seconds: 1, first_check_retry_seconds: [] },
        skill_fetch_timeout_ms: 2000,
        ...registry,
      },
    },
    { hostLookup: dns },
  );
  await withScope(app, { _id: 'skill-author', ui_permissions: { publish_agent: ['all'] } });
  return {
    app,
    dns,
    admin: await asUser(app, ['mcp-registry-admin'], 'alice'),
    author: await asUser(app, ['skill-author'], 'ann'),
  };
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const mcpHeaders = (auth: Record<string, string>) => ({
  ...auth,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
});

t.test(
  'registration refuses every spelling of a metadata or link-local address in proxy_pass_url, mcp_endpoint and sse_endpoint',
  async (t) => {
    const { app, admin } = await setup(t);
    let i = 0;
    for (const field of ['proxy_pass_url', 'mcp_endpoint', 'sse_endpoint'] as const) {
      for (const { host, cls, form } of REFUSED_BACKEND) {
        const url = `http://${host}:8080/mcp`;
        const path = `/ssrf-${i++}`;
        const payload = { name: 'ssrf', description: 'ssrf', path, proxy_pass_url: 'http://127.0.0.1:9', [field]: url };
        const res = await app.inject({ method: 'POST', url: '/api/servers/register', headers: admin, payload });
        t.equal(res.statusCode, 400, `${field} ${form} (${host}): ${res.body}`);
        t.match(
          res.json(),
          { code: 'SB_ERR_REGISTRY_BLOCKED_ADDRESS', detail: new RegExp(`^${field} .*reaches a ${cls} address`) },
          `${field} ${form}: the detail names the field and the class`,
        );
      }
    }
    const list = await app.inject({ url: '/api/servers', headers: admin });
    t.equal(list.statusCode, 200);
    t.notMatch(list.body, /ssrf-/, 'nothing was stored');
  },
);

t.test(
  'skill_md_url: every non-public spelling is refused (metadata ones even when private URLs are allowed)',
  async (t) => {
    const strict = await setup(t);
    const lenient = await setup(t, { allow_private_skill_urls: true });
    let i = 0;
    for (const { host, cls, form } of NOT_PUBLIC) {
      const body = { name: `ssrf-${i++}`, description: 'd', skill_md_url: `http://${host}/SKILL.md` };
      const res = await strict.app.inject({
        method: 'POST',
        url: '/api/skills',
        headers: strict.author,
        payload: body,
      });
      t.equal(res.statusCode, 400, `${form} (${host}): ${res.body}`);
      t.match(res.json(), {
        code: 'SB_ERR_REGISTRY_SKILL_URL_REFUSED',
        detail: new RegExp(`points to a ${cls} address`),
      });
      if (cls !== 'metadata') continue;
      const open = await lenient.app.inject({
        method: 'POST',
        url: '/api/skills',
        headers: lenient.author,
        payload: body,
      });
      t.equal(open.statusCode, 400, `allow_private_skill_urls does not open ${form} (${host})`);
      t.match(open.json(), { code: 'SB_ERR_REGISTRY_SKILL_URL_REFUSED', detail: /metadata address/ });
    }
    const list = await strict.app.inject({ url: '/api/skills', headers: strict.author });
    t.equal(list.json().total, 0, 'nothing was stored');
  },
);

t.test('redirects to any spelling of a metadata address are refused, never followed', async (t) => {
  const { app, author } = await setup(t, { allow_private_skill_urls: true });
  let hopsServed = 0;
  const server = createServer((req, res) => {
    const i = Number(req.url?.split('/')[2]);
    hopsServed++;
    res.writeHead(302, { location: `http://${HOST_FORMS[i].host}/latest/meta-data/` }).end();
  });
  const base = await listenOnLoopback(t, server);
  const metadata = HOST_FORMS.map((f, i) => ({ ...f, i })).filter((f) => f.cls === 'metadata');
  for (const { host, form, i } of metadata) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/skills',
      headers: author,
      payload: { name: `hop-${i}`, description: 'd', skill_md_url: `${base}/to/${i}` },
    });
    t.equal(res.statusCode, 400, `redirect to ${form} (${host}): ${res.body}`);
    t.match(res.json(), { code: 'SB_ERR_REGISTRY_SKILL_URL_REFUSED', detail: /metadata address/ });
  }
  t.equal(hopsServed, metadata.length, 'each first hop was fetched, no second one anywhere');
});

t.test('the gateway answers a backend redirect with 502 and does not pass it on', async (t) => {
  const { app, admin } = await setup(t);
  let seen = 0;
  const server = createServer((req, res) => {
    seen++;
    req.resume();
    res.writeHead(302, { location: 'http://[::ffff:a9fe:a9fe]/latest/meta-data/' }).end();
  });
  const base = await listenOnLoopback(t, server);
  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: { name: 'Hop', description: 'd', path: '/hop', proxy_pass_url: base },
  });
  t.equal(reg.statusCode, 201, reg.body);
  const before = seen;
  const res = await app.inject({ method: 'POST', url: '/hop/mcp', headers: mcpHeaders(admin), payload: initialize });
  t.equal(res.statusCode, 502, res.body);
  t.match(res.json(), { code: 'SB_ERR_GATEWAY_BACKEND_REDIRECT', detail: /\/hop redirected \(302\)/ });
  t.notOk(res.headers.location, 'no Location reaches the client');
  t.equal(seen, before + 1, 'the redirect was not followed');
});

t.test(
  'DNS rebinding: a backend name re-pointed after registration is refused when the gateway and the health probe connect',
  async (t) => {
    const srv = await startControlledServer({
      tools: [{ name: 'echo', description: 'echo', inputSchema: { type: 'object' } }],
    });
    t.teardown(() => srv.stop());
    const port = new URL(srv.base).port;
    // rebind.test answers loopback once (registration) and the metadata address from then on.
    const dns = fakeDns({ 'rebind.test': ['127.0.0.1', '169.254.169.254'], 'pinned.test': ['127.0.0.1'] });
    const { app, admin } = await setup(t, {}, dns);

    const reg = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: admin,
      payload: { name: 'Rebind', description: 'd', path: '/rebind', proxy_pass_url: `http://rebind.test:${port}` },
    });
    t.equal(reg.statusCode, 201, `the registration check saw loopback (allowed for backends): ${reg.body}`);
    const res = await app.inject({
      method: 'POST',
      url: '/rebind/mcp',
      headers: mcpHeaders(admin),
      payload: initialize,
    });
    t.equal(res.statusCode, 403, res.body);
    t.match(res.json(), { code: 'SB_ERR_GATEWAY_BLOCKED_ADDRESS', detail: /metadata address \(rebind\.test\)/ });
    const refreshed = await app.inject({ method: 'POST', url: '/api/servers/rebind/refresh', headers: admin });
    t.equal(
      refreshed.json().health_status,
      'unhealthy: blocked address (metadata)',
      'the probe is refused at connect time too',
    );
    t.same(srv.seen, [], 'nothing reached the backend');
    t.ok(dns.calls.get('rebind.test')! >= 3, 'the name was resolved again for each connection');

    // The connection goes to the address the guard judged: pinned.test exists only in the simulated DNS.
    const ok = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: admin,
      payload: { name: 'Pinned', description: 'd', path: '/pinned', proxy_pass_url: `http://pinned.test:${port}` },
    });
    t.equal(ok.statusCode, 201, ok.body);
    const through = await app.inject({
      method: 'POST',
      url: '/pinned/mcp',
      headers: mcpHeaders(admin),
      payload: initialize,
    });
    t.equal(through.statusCode, 200, through.body);
    t.ok(
      srv.seen.some((r) => r.rpc === 'initialize'),
      'the pinned address was reached',
    );
    const healthy = await app.inject({ method: 'POST', url: '/api/servers/pinned/refresh', headers: admin });
    t.equal(healthy.json().health_status, 'healthy');
  },
);

t.test(
  'DNS rebinding: SKILL.md from a name that turns private between the check and the connect is refused',
  async (t) => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('# secret internal document\n');
    });
    const base = await listenOnLoopback(t, server);
    const port = new URL(base).port;
    const dns = fakeDns({ 'skills.test': ['93.184.216.34', '127.0.0.1'] });
    const { app, author } = await setup(t, {}, dns);
    const res = await app.inject({
      method: 'POST',
      url: '/api/skills',
      headers: author,
      payload: { name: 'rebound', description: 'd', skill_md_url: `http://skills.test:${port}/SKILL.md` },
    });
    t.equal(res.statusCode, 400, res.body);
    t.match(res.json(), {
      code: 'SB_ERR_REGISTRY_SKILL_URL_REFUSED',
      detail: /loopback address.*skills\.test resolved there when the fetch connected/,
    });
    t.equal(hits, 0, 'the private server was never contacted');
  },
);
