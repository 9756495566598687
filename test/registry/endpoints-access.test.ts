import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { adminBasic, asUser, mintToken, withScope } from '../helpers/registry-auth.ts';
import type { ResourceType } from '../../plugins/registry/auth/self-tokens.ts';

/**
 * The access audit of every endpoint family of spec 4.1-4.9 in scope of the
 * catalog issue: one row per endpoint, one column per kind of caller.
 *
 * - none: no credentials -> 401 (HTML pages of the session family may redirect to the login page instead)
 * - bound: an admin token bound to another resource -> 403 (rule 6), except /api/auth/me and public endpoints
 * - own: an admin token bound to the row's resource -> what the admin gets, for rows about one resource
 * - nobody: a valid token whose scopes grant nothing -> 403 (404 in /v0), or an empty list where lists are filtered
 * - reader: the read-only user scope -> reads granted, changes 403
 * - granted: a scope granting exactly the permission the row needs, on that resource only
 * - admin: the admin scope (HTTP Basic for /api/internal/*)
 *
 * Every error answer is checked for the {detail, code} shape with a non-empty detail.
 */

type Role = 'none' | 'bound' | 'own' | 'nobody' | 'reader' | 'granted' | 'admin';
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Body = Record<string, unknown> | undefined;

interface Row {
  method: Method;
  url: string;
  /** A body per role (creation rows use a different name per role so no row meets a 409). */
  body?: (role: Role) => Body;
  form?: boolean;
  /** Expected status per role; a role left out is not exercised. 'empty' = 200 with an empty list under `listKey`. */
  expect: Partial<Record<Role, number | 'empty'>>;
  listKey?: string;
  /** The scope document the 'granted' caller holds (ui_permissions / server_access). */
  grant?: { ui_permissions?: Record<string, string[]>; server_access?: unknown[] };
  /** Who the 'granted' caller is (ownership rows: the owner's name). */
  grantedUser?: string;
  /** The resource the 'own' token is bound to. */
  target?: { type: ResourceType; id: string };
}

const SKILL_MD = '---\nname: pdf-tools\ndescription: Work with PDFs\n---\n# PDF tools\n';
const weather = {
  name: 'Weather',
  description: 'Forecasts',
  path: '/weather',
  proxy_pass_url: 'http://127.0.0.1:9/mcp',
};
const card = (name: string) => ({
  name,
  path: `/${name}`,
  description: `${name} agent`,
  url: `https://agents.example/${name}`,
  version: '1.0.0',
  skills: [{ name: 'review', description: 'Reviews code' }],
});
const V0_NAME = encodeURIComponent('io.switchboard/weather');

async function skillHost(t: { teardown: (fn: () => unknown) => void }): Promise<string> {
  const server: Server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/markdown' }).end(SKILL_MD),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/SKILL.md`;
}

function rows(skillUrl: string): Record<string, Row[]> {
  const w = { type: 'server' as const, id: 'weather' };
  const helper = { type: 'agent' as const, id: 'helper' };
  const skill = { type: 'skill' as const, id: 'pdf-tools' };
  const seeWeather = { server_access: [{ server: 'weather', methods: ['initialize', 'tools/list'] }] };
  const write = (perm: string, path = '/weather') => ({ ui_permissions: { [perm]: [path] } });
  const closed = { none: 401, bound: 403, nobody: 403, reader: 403 } as const;
  return {
    '4.1 agents': [
      {
        method: 'POST',
        url: '/api/agents/register',
        body: (r) => card(`new-${r}`),
        expect: { ...closed, granted: 201, admin: 201 },
        grant: write('publish_agent', '/new-granted'),
      },
      {
        method: 'GET',
        url: '/api/agents',
        listKey: 'agents',
        expect: { none: 401, bound: 403, nobody: 'empty', reader: 200, admin: 200 },
      },
      {
        method: 'GET',
        url: '/api/agents/helper',
        target: helper,
        expect: { ...closed, reader: 200, own: 200, granted: 200, admin: 200 },
        grant: write('get_agent', '/helper'),
      },
      {
        method: 'PUT',
        url: '/api/agents/helper',
        target: helper,
        body: () => card('helper'),
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('modify_service', '/helper'),
        grantedUser: 'pat',
      },
      {
        method: 'POST',
        url: '/api/agents/helper/toggle?enabled=false',
        target: helper,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('toggle_service', '/helper'),
      },
      {
        method: 'DELETE',
        url: '/api/agents/helper',
        target: helper,
        expect: { ...closed, own: 204, granted: 204, admin: 204 },
        grant: write('list_agents', '/helper'),
        grantedUser: 'pat',
      },
      {
        method: 'POST',
        url: '/api/agents/discover',
        body: () => ({ skills: ['review'] }),
        listKey: 'agents',
        expect: { none: 401, bound: 403, nobody: 'empty', reader: 200, admin: 200 },
      },
      {
        method: 'POST',
        url: '/api/agents/discover/semantic?query=review',
        listKey: 'agents',
        expect: { none: 401, bound: 403, nobody: 'empty', reader: 200, admin: 200 },
      },
    ],
    '4.2 v0': [
      {
        method: 'GET',
        url: '/v0/servers',
        listKey: 'servers',
        expect: { none: 401, bound: 403, own: 403, nobody: 'empty', reader: 200, admin: 200 },
        target: w,
      },
      {
        method: 'GET',
        url: `/v0/servers/${V0_NAME}/versions`,
        expect: { none: 401, bound: 403, nobody: 404, reader: 200, granted: 200, admin: 200 },
        grant: seeWeather,
      },
      {
        method: 'GET',
        url: `/v0/servers/${V0_NAME}/versions/latest`,
        expect: { none: 401, bound: 403, nobody: 404, reader: 200, granted: 200, admin: 200 },
        grant: seeWeather,
      },
    ],
    '4.3 UI family': [
      {
        method: 'GET',
        url: '/api/servers',
        listKey: 'servers',
        expect: { none: 401, bound: 403, nobody: 'empty', reader: 200, granted: 200, admin: 200 },
        grant: seeWeather,
      },
      { method: 'GET', url: '/api/', expect: { none: 401, bound: 403, nobody: 200, reader: 200, admin: 200 } },
      {
        method: 'POST',
        url: '/api/toggle/weather',
        form: true,
        body: () => ({ enabled: 'false' }),
        target: w,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('toggle_service'),
      },
      {
        method: 'POST',
        url: '/api/register',
        form: true,
        body: (r) => ({ ...weather, path: `/ui-${r}` }),
        expect: { ...closed, granted: 201, admin: 201 },
        grant: write('register_service', '/ui-granted'),
      },
      {
        method: 'GET',
        url: '/api/edit/weather',
        target: w,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('modify_service'),
      },
      {
        method: 'POST',
        url: '/api/edit/weather',
        form: true,
        body: () => ({ name: 'Weather', description: 'Edited' }),
        target: w,
        expect: { ...closed, own: 303, granted: 303, admin: 303 },
        grant: write('modify_service'),
      },
      // The token form is a page for browsers: without a session it sends them to the login page.
      { method: 'GET', url: '/api/tokens', expect: { none: 302, bound: 403, nobody: 200, reader: 200, admin: 200 } },
      {
        method: 'GET',
        url: '/api/server_details/weather',
        target: w,
        expect: { ...closed, reader: 200, own: 200, granted: 200, admin: 200 },
        grant: seeWeather,
      },
      {
        method: 'GET',
        url: '/api/server_details/all',
        expect: { none: 401, bound: 403, nobody: 200, reader: 200, admin: 200 },
      },
      {
        method: 'GET',
        url: '/api/tools/weather',
        target: w,
        expect: { ...closed, reader: 200, own: 200, granted: 200, admin: 200 },
        grant: seeWeather,
      },
      {
        method: 'GET',
        url: '/api/tools/all',
        listKey: 'tools',
        expect: { none: 401, bound: 403, nobody: 'empty', reader: 200, admin: 200 },
      },
    ],
    '4.4 tokens': [
      {
        method: 'POST',
        url: '/api/tokens/generate',
        body: () => ({ expires_in_hours: 1 }),
        target: w,
        expect: { none: 401, bound: 403, own: 403, reader: 200, admin: 200 },
      },
      // No identity provider in this app: the admin passes the check and learns there is no M2M token to give.
      {
        method: 'GET',
        url: '/api/admin/tokens',
        target: w,
        expect: { none: 401, bound: 403, own: 403, nobody: 403, reader: 403, admin: 503 },
      },
    ],
    '4.5 internal (HTTP Basic)': [
      {
        method: 'POST',
        url: '/api/internal/register',
        form: true,
        body: (r) => ({ ...weather, path: `/int-${r}` }),
        expect: { none: 401, bound: 403, reader: 401, granted: 401, admin: 201 },
        grant: write('register_service', '/int-granted'),
      },
      {
        method: 'POST',
        url: '/api/internal/toggle',
        form: true,
        body: () => ({ service_path: '/weather' }),
        expect: { none: 401, bound: 403, reader: 401, admin: 200 },
      },
      {
        method: 'POST',
        url: '/api/internal/add-to-groups',
        form: true,
        body: () => ({ server_name: 'weather', group_names: 'g1' }),
        expect: { none: 401, bound: 403, reader: 401, admin: 200 },
      },
      {
        method: 'POST',
        url: '/api/internal/remove-from-groups',
        form: true,
        body: () => ({ server_name: 'weather', group_names: 'g1' }),
        expect: { none: 401, bound: 403, reader: 401, admin: 200 },
      },
      { method: 'GET', url: '/api/internal/list', expect: { none: 401, bound: 403, reader: 401, admin: 200 } },
      {
        method: 'POST',
        url: '/api/internal/create-group',
        form: true,
        body: (r) => ({ group_name: `grp-${r}` }),
        expect: { none: 401, bound: 403, reader: 401, admin: 201 },
      },
      {
        method: 'POST',
        url: '/api/internal/delete-group',
        form: true,
        body: () => ({ group_name: 'grp-admin' }),
        expect: { none: 401, bound: 403, reader: 401, admin: 200 },
      },
      { method: 'GET', url: '/api/internal/list-groups', expect: { none: 401, bound: 403, reader: 401, admin: 200 } },
      {
        method: 'POST',
        url: '/api/internal/remove',
        form: true,
        body: () => ({ service_path: '/weather' }),
        expect: { none: 401, bound: 403, reader: 401, admin: 200 },
      },
    ],
    '4.6 programmatic servers': [
      {
        method: 'POST',
        url: '/api/servers/register',
        form: true,
        body: (r) => ({ ...weather, path: `/api-${r}` }),
        expect: { ...closed, granted: 201, admin: 201 },
        grant: write('register_service', '/api-granted'),
      },
      {
        method: 'GET',
        url: '/api/servers/weather',
        target: w,
        expect: { ...closed, reader: 200, own: 200, granted: 200, admin: 200 },
        grant: seeWeather,
      },
      {
        method: 'PUT',
        url: '/api/servers/weather',
        form: true,
        body: () => ({ description: 'Updated' }),
        target: w,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('modify_service'),
      },
      {
        method: 'PATCH',
        url: '/api/servers/weather/auth-credential',
        body: () => ({ auth_scheme: 'bearer', auth_credential: 'backend-secret' }),
        target: w,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('modify_service'),
      },
      {
        method: 'PUT',
        url: '/api/servers/weather/credentials',
        body: () => ({ auth_scheme: 'api_key', auth_credential: 'backend-secret' }),
        target: w,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('register_service'),
      },
      {
        method: 'POST',
        url: '/api/servers/toggle',
        form: true,
        body: () => ({ path: '/weather', new_state: 'false' }),
        expect: { ...closed, granted: 200, admin: 200 },
        grant: write('toggle_service'),
      },
      {
        method: 'GET',
        url: '/api/servers/weather/rating',
        target: w,
        expect: { ...closed, reader: 200, own: 200, granted: 200, admin: 200 },
        grant: seeWeather,
      },
      {
        method: 'POST',
        url: '/api/servers/weather/rating',
        body: () => ({ rating: 4 }),
        target: w,
        expect: { ...closed, reader: 201, own: 201, granted: 201, admin: 201 },
        grant: seeWeather,
      },
      {
        method: 'GET',
        url: '/api/servers/weather/versions',
        target: w,
        expect: { ...closed, reader: 200, own: 200, granted: 200, admin: 200 },
        grant: seeWeather,
      },
      {
        method: 'POST',
        url: '/api/servers/weather/versions',
        body: (r) => ({ version: `v-${r}` }),
        target: w,
        expect: { ...closed, own: 201, granted: 201, admin: 201 },
        grant: write('modify_service'),
      },
      // Group scopes decide who may call the server: modify_service on it is not enough, admins only.
      {
        method: 'POST',
        url: '/api/servers/groups/add',
        form: true,
        body: () => ({ server_name: 'weather', group_names: 'g1' }),
        expect: { ...closed, granted: 403, admin: 200 },
        grant: write('modify_service'),
      },
      {
        method: 'POST',
        url: '/api/servers/groups/remove',
        form: true,
        body: () => ({ server_name: 'weather', group_names: 'g1' }),
        expect: { ...closed, granted: 403, admin: 200 },
        grant: write('modify_service'),
      },
      {
        method: 'DELETE',
        url: '/api/servers/weather',
        target: w,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('modify_service'),
      },
    ],
    '4.7 skills': [
      {
        method: 'POST',
        url: '/api/skills',
        body: (r) => ({ name: `new-${r}`, description: 'A skill', skill_md_url: skillUrl }),
        expect: { ...closed, granted: 201, admin: 201 },
        grant: write('publish_agent', '/skills/new-granted'),
      },
      {
        method: 'GET',
        url: '/api/skills',
        listKey: 'skills',
        expect: { none: 401, bound: 403, nobody: 200, reader: 200, admin: 200 },
      },
      {
        method: 'GET',
        url: '/api/skills/private-notes',
        target: { type: 'skill', id: 'private-notes' },
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grantedUser: 'ann',
      },
      {
        method: 'GET',
        url: '/api/skills/pdf-tools',
        target: skill,
        expect: { none: 401, bound: 403, own: 200, nobody: 200, reader: 200, admin: 200 },
      },
      {
        method: 'PUT',
        url: '/api/skills/pdf-tools',
        body: () => ({ description: 'Changed' }),
        target: skill,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grantedUser: 'ann',
      },
      {
        method: 'POST',
        url: '/api/skills/pdf-tools/toggle',
        body: () => ({ enabled: false }),
        target: skill,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('toggle_service', '/skills/pdf-tools'),
      },
      {
        method: 'POST',
        url: '/api/skills/pdf-tools/rating',
        body: () => ({ rating: 5 }),
        target: skill,
        expect: { none: 401, bound: 403, own: 201, reader: 201, admin: 201 },
      },
      {
        method: 'DELETE',
        url: '/api/skills/pdf-tools',
        target: skill,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grantedUser: 'ann',
      },
    ],
    '4.8 utility and public': [
      {
        method: 'GET',
        url: '/api/auth/me',
        target: w,
        expect: { none: 401, bound: 200, own: 200, nobody: 200, reader: 200, admin: 200 },
      },
      {
        method: 'GET',
        url: '/api/debug/user-context',
        target: w,
        expect: { none: 401, bound: 403, own: 403, nobody: 200, reader: 200, admin: 200 },
      },
      {
        method: 'GET',
        url: '/api/scopes',
        target: w,
        expect: { none: 401, bound: 403, own: 403, nobody: 200, reader: 200, admin: 200 },
      },
      // Public endpoints answer everyone alike and ignore a bound token (it authorises nothing there).
      {
        method: 'GET',
        url: '/.well-known/mcp-servers',
        target: w,
        expect: { none: 200, bound: 200, own: 200, nobody: 200, reader: 200, admin: 200 },
      },
      {
        method: 'GET',
        url: '/health',
        target: w,
        expect: { none: 200, bound: 200, own: 200, reader: 200, admin: 200 },
      },
      {
        method: 'GET',
        url: '/api/auth/providers',
        target: w,
        expect: { none: 200, bound: 200, own: 200, reader: 200, admin: 200 },
      },
      { method: 'GET', url: '/api/auth/login', target: w, expect: { none: 200, bound: 200, own: 200 } },
    ],
    '4.9 older unprefixed family': [
      {
        method: 'POST',
        url: '/register',
        form: true,
        body: (r) => ({ ...weather, path: `/old-${r}` }),
        expect: { ...closed, granted: 201, admin: 201 },
        grant: write('register_service', '/old-granted'),
      },
      {
        method: 'POST',
        url: '/toggle/weather',
        form: true,
        body: () => ({ enabled: 'on' }),
        target: w,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('toggle_service'),
      },
      {
        method: 'GET',
        url: '/edit/weather',
        target: w,
        expect: { ...closed, own: 200, granted: 200, admin: 200 },
        grant: write('modify_service'),
      },
      {
        method: 'POST',
        url: '/edit/weather',
        form: true,
        body: () => ({ name: 'Weather', proxy_pass_url: 'http://127.0.0.1:9/mcp' }),
        target: w,
        expect: { ...closed, own: 303, granted: 303, admin: 303 },
        grant: write('modify_service'),
      },
    ],
  };
}

/** The fixtures every row expects: /weather and /other servers, agent /helper (owned by pat), skills pdf-tools and private-notes (owned by ann). */
async function seed(app: FastifyInstance, skillUrl: string): Promise<void> {
  const basic = adminBasic(app);
  const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
  for (const s of [weather, { ...weather, name: 'Other', path: '/other' }]) {
    const r = await app.inject({
      method: 'POST',
      url: '/api/internal/register',
      headers: { ...basic, 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ ...s, overwrite: 'true' }),
    });
    if (r.statusCode !== 201) throw new Error(`seed server: ${r.body}`);
  }
  const pat = await asUser(app, ['publisher'], 'pat');
  const agent = await app.inject({
    method: 'POST',
    url: '/api/agents/register',
    headers: pat,
    payload: card('helper'),
  });
  if (agent.statusCode !== 201 && agent.statusCode !== 409) throw new Error(`seed agent: ${agent.body}`);
  const ann = await asUser(app, ['publisher'], 'ann');
  for (const [name, visibility] of [
    ['pdf-tools', 'public'],
    ['private-notes', 'private'],
  ]) {
    const s = await app.inject({
      method: 'POST',
      url: '/api/skills',
      headers: ann,
      payload: { name, description: 'A skill', skill_md_url: skillUrl, visibility },
    });
    if (s.statusCode !== 201 && s.statusCode !== 409) throw new Error(`seed skill: ${s.body}`);
  }
}

t.test('every endpoint family: grants and denials per kind of caller', async (t) => {
  const app = await makeApp(t, { registry: { allow_private_skill_urls: true, skill_fetch_timeout_ms: 2000 } });
  const skillUrl = await skillHost(t);
  // Specific paths only: a register/modify/publish permission on 'all' would make its holder an admin.
  await withScope(app, {
    _id: 'publisher',
    ui_permissions: {
      publish_agent: ['/helper', '/skills/pdf-tools', '/skills/private-notes'],
      modify_service: ['/helper'],
    },
  });
  await seed(app, skillUrl);

  const fixed: Partial<Record<Role, Record<string, string>>> = {
    none: {},
    bound: {
      authorization: `Bearer ${await mintToken(app, { username: 'alice', scopes: ['mcp-registry-admin'], resource: { type: 'server', id: 'other' } })}`,
    },
    nobody: await asUser(app, ['no-such-scope'], 'nina'),
    reader: await asUser(app, ['mcp-registry-user'], 'bob'),
    admin: await asUser(app, ['mcp-registry-admin'], 'alice'),
  };
  let n = 0;
  for (const [family, list] of Object.entries(rows(skillUrl))) {
    t.test(family, async (t) => {
      for (const row of list) {
        const name = `${row.method} ${row.url}`;
        for (const role of ['none', 'bound', 'nobody', 'reader', 'own', 'granted', 'admin'] as const) {
          const want = row.expect[role];
          if (want === undefined) continue;
          let headers: Record<string, string>;
          if (role === 'own') {
            headers = {
              authorization: `Bearer ${await mintToken(app, { username: 'alice', scopes: ['mcp-registry-admin'], resource: row.target! })}`,
            };
          } else if (role === 'granted') {
            const scope = `grant-${n++}`;
            await withScope(app, {
              _id: scope,
              ui_permissions: row.grant?.ui_permissions ?? {},
              server_access: row.grant?.server_access ?? [],
            });
            headers = await asUser(
              app,
              [scope, 'publisher'].slice(0, row.grantedUser ? 2 : 1),
              row.grantedUser ?? `g-${n}`,
            );
          } else if (role === 'admin' && row.url.startsWith('/api/internal/')) {
            headers = adminBasic(app);
          } else if (role === 'reader' && row.url.startsWith('/api/internal/')) {
            // A bearer token is never enough here, not even an admin's (HTTP Basic only).
            headers = fixed.admin!;
          } else {
            headers = fixed[role]!;
          }
          // Grants may change or remove the fixtures: put them back before each caller that can act.
          if (role === 'own' || role === 'granted' || role === 'admin') await seed(app, skillUrl);
          const body = row.body?.(role);
          const res = await app.inject({
            method: row.method,
            url: row.url,
            headers: {
              ...headers,
              ...(body && row.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
            },
            ...(body
              ? {
                  payload: row.form ? new URLSearchParams(body as Record<string, string>).toString() : (body as object),
                }
              : {}),
          });
          const status = want === 'empty' ? 200 : want;
          t.equal(
            res.statusCode,
            status,
            `${name} as ${role}: ${res.statusCode === status ? '' : res.body.slice(0, 300)}`,
          );
          if (want === 'empty' && res.statusCode === 200) {
            const list = res.json()[row.listKey!];
            t.same(Array.isArray(list) ? list : Object.keys(list), [], `${name} as ${role}: filtered to nothing`);
          }
          if (res.statusCode >= 400) {
            const err = res.json();
            t.same(Object.keys(err).sort(), ['code', 'detail'], `${name} as ${role}: {detail, code}`);
            t.ok(
              typeof err.detail === 'string' ? err.detail.length > 10 : err.detail.length > 0,
              `${name} as ${role}: a detail that says what is wrong`,
            );
            if (res.statusCode === 401 && row.url !== '/api/auth/login')
              t.ok(res.headers['www-authenticate'], `${name} as ${role}: a challenge`);
            if (role === 'bound' && res.statusCode === 403)
              t.equal(err.code, 'SB_ERR_TOKEN_RESOURCE_BOUND', `${name} as bound: the binding is the reason`);
            // One 401 for the whole internal family, whichever plugin serves the route.
            if (row.url.startsWith('/api/internal/') && res.statusCode === 401) {
              t.equal(err.code, 'SB_ERR_AUTH_BASIC_REQUIRED', `${name} as ${role}: Basic required`);
              t.match(res.headers['www-authenticate'], /^Basic realm="mcp-registry"/);
            }
          }
          if (res.statusCode === 302) t.match(res.headers.location, /login/, `${name} as ${role}: to the login page`);
        }
      }
    });
  }
});

t.test('a skill-bound token names the skill or its path; both reach it by either URL, and nothing else', async (t) => {
  const app = await makeApp(t, { registry: { allow_private_skill_urls: true, skill_fetch_timeout_ms: 2000 } });
  const skillUrl = await skillHost(t);
  await withScope(app, {
    _id: 'publisher',
    ui_permissions: {
      publish_agent: ['/helper', '/skills/pdf-tools', '/skills/private-notes'],
      modify_service: ['/helper'],
    },
  });
  await seed(app, skillUrl);
  for (const id of ['pdf-tools', 'skills/pdf-tools', '/skills/pdf-tools/']) {
    const headers = {
      authorization: `Bearer ${await mintToken(app, { username: 'alice', scopes: ['mcp-registry-admin'], resource: { type: 'skill', id } })}`,
    };
    for (const url of ['/api/skills/pdf-tools', '/api/skills/skills/pdf-tools', '/api/skills/pdf-tools/rating']) {
      t.equal((await app.inject({ url, headers })).statusCode, 200, `bound to ${id}: ${url}`);
    }
    for (const url of ['/api/skills/private-notes', '/api/skills', '/api/servers/pdf-tools', '/api/agents/pdf-tools']) {
      t.equal((await app.inject({ url, headers })).statusCode, 403, `bound to ${id}: ${url}`);
    }
  }
});

t.test('minting a bound token (rule 7) follows the catalog visibility of registered resources', async (t) => {
  const app = await makeApp(t, { registry: { allow_private_skill_urls: true, skill_fetch_timeout_ms: 2000 } });
  const skillUrl = await skillHost(t);
  await withScope(app, {
    _id: 'publisher',
    ui_permissions: {
      publish_agent: ['/helper', '/skills/pdf-tools', '/skills/private-notes'],
      modify_service: ['/helper'],
    },
  });
  await seed(app, skillUrl);
  const mint = (headers: Record<string, string>, type: string, id: string) =>
    app.inject({ method: 'POST', url: '/api/tokens/generate', headers, payload: { resource: { type, id } } });
  const ann = await asUser(app, ['publisher'], 'ann');
  const reader = await asUser(app, ['mcp-registry-user'], 'bob');
  const nobody = await asUser(app, ['no-such-scope'], 'nina');

  t.equal((await mint(ann, 'skill', 'private-notes')).statusCode, 200, 'the owner of a private skill');
  t.equal((await mint(ann, 'skill', 'skills/private-notes')).statusCode, 200, 'named by its path');
  const denied = await mint(reader, 'skill', 'private-notes');
  t.equal(denied.statusCode, 403, 'list_service on all does not show someone else’s private skill');
  t.equal(denied.json().code, 'SB_ERR_TOKEN_RESOURCE_FORBIDDEN');
  t.equal((await mint(reader, 'skill', 'pdf-tools')).statusCode, 200, 'public skills are everyone’s');
  t.equal((await mint(nobody, 'server', 'weather')).statusCode, 403);
  t.equal((await mint(reader, 'server', 'weather')).statusCode, 200);
  t.equal((await mint(nobody, 'agent', 'helper')).statusCode, 403);
  t.equal((await mint(ann, 'agent', 'helper')).statusCode, 403, 'publish rights on other paths do not show the agent');
  t.equal((await mint(await asUser(app, ['publisher'], 'pat'), 'agent', 'helper')).statusCode, 200, 'its owner');
});
