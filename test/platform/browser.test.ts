import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { makeApp, tempDir } from '../helpers/app.ts';

/**
 * A throwaway auth provider package (static keys -> principals), discovered
 * through `provider_packages`, so the tests can act as two users and an admin.
 */
function twoUserAuth() {
  const dir = tempDir('sb-auth-fixture-');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fixture-static-keys', type: 'module', switchboard: { provides: ['auth'], entry: './index.mjs' } }));
  writeFileSync(
    join(dir, 'index.mjs'),
    `export const providers = [{
  type: 'fixture_keys', kind: 'auth',
  create: (name, options) => ({
    name, type: 'fixture_keys', kind: 'auth', capabilities: {},
    authenticate: async (req) => options.keys[req.headers['x-api-key']],
    publicConfig: () => ({ enabled: true }),
    healthcheck: async () => 'ok', close: async () => {},
  }),
}];\n`,
  );
  const user = (id: string, is_admin = false) => ({ id, type: 'user', is_admin, groups: [], scopes: [] });
  return {
    provider_packages: [dir],
    providers: { auth: { default: 'keys', instances: { keys: { type: 'fixture_keys', options: { keys: { 'alice-key': user('alice'), 'bob-key': user('bob'), 'root-key': user('root', true) } } } } } },
  };
}

const alice = { 'x-api-key': 'alice-key' };
const bob = { 'x-api-key': 'bob-key' };
const root = { 'x-api-key': 'root-key' };

t.test('noop mode: session records with data, page actions 501', async (t) => {
  const app = await makeApp(t);
  const created = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions', payload: { session_id: 's1', viewport: { width: 1280, height: 720 }, config: { headless: true } } });
  t.equal(created.statusCode, 201);
  t.match(created.json(), { session_id: 's1', owner_id: 'noop', status: 'active', viewport: { width: 1280, height: 720 }, config: { headless: true } });

  const generated = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions' });
  t.equal(generated.statusCode, 201, 'the start request body is optional');
  t.match(generated.json(), { session_id: /^[0-9a-f-]{36}$/, viewport: null, config: {} });

  const dup = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions', payload: { session_id: 's1' } });
  t.equal(dup.statusCode, 409);
  t.equal(dup.json().code, 'SB_ERR_BROWSER_SESSION_EXISTS');

  const list = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions' });
  t.equal(list.statusCode, 200);
  t.same(list.json().sessions.map((s: { session_id: string }) => s.session_id).sort(), ['s1', generated.json().session_id].sort());

  const info = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions/s1' });
  t.equal(info.statusCode, 200);
  t.equal(info.json().session_id, 's1');

  const nav = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions/s1/navigate', payload: { url: 'http://127.0.0.1/' } });
  t.equal(nav.statusCode, 501);
  t.equal(nav.json().code, 'SB_ERR_CAPABILITY_MISSING');
  t.match(nav.json().detail, /browser provider 'noop' does not support navigation \(capability 'navigation'\).*X-Provider-Browser/);

  const gated: Array<[string, string, unknown, RegExp]> = [
    ['GET', 'screenshot', undefined, /screenshots/],
    ['GET', 'content', undefined, /page content/],
    ['POST', 'click', { selector: '#a' }, /clicking/],
    ['POST', 'type', { selector: '#a', text: 'x' }, /typing/],
    ['POST', 'evaluate', { expression: '1+1' }, /JavaScript \(capability 'evaluate'\)/],
    ['GET', 'live-view', undefined, /live view \(capability 'live_view'\)/],
  ];
  for (const [method, op, payload, detail] of gated) {
    const res = await app.inject({ method: method as 'GET' | 'POST', url: `/api/v1/browser/sessions/s1/${op}`, payload: payload as object | undefined });
    t.equal(res.statusCode, 501, `${op} is 501 on noop`);
    t.match(res.json().detail, detail, `${op} names what is missing`);
  }

  const del = await app.inject({ method: 'DELETE', url: '/api/v1/browser/sessions/s1' });
  t.equal(del.statusCode, 204);
  t.equal(del.body, '');
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/browser/sessions/s1' })).statusCode, 404, 'gone after delete');
});

t.test('unknown sessions: 404 on info and delete, 400 on interaction', async (t) => {
  const app = await makeApp(t);
  const info = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions/nope' });
  t.equal(info.statusCode, 404);
  t.match(info.json(), { code: 'SB_ERR_BROWSER_SESSION_NOT_FOUND', detail: "Browser session 'nope' not found" });
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/browser/sessions/nope' })).statusCode, 404);
  for (const [method, op, payload] of [
    ['POST', 'navigate', { url: 'http://127.0.0.1/' }],
    ['GET', 'screenshot', undefined],
    ['GET', 'content', undefined],
    ['POST', 'click', { selector: '#a' }],
    ['POST', 'type', { selector: '#a', text: 'x' }],
    ['POST', 'evaluate', { expression: '1' }],
  ] as const) {
    const res = await app.inject({ method, url: `/api/v1/browser/sessions/nope/${op}`, payload });
    t.equal(res.statusCode, 400, `${op} on an unknown session is 400`);
    t.equal(res.json().code, 'SB_ERR_BROWSER_SESSION_NOT_FOUND');
  }
});

t.test('bad input is a 4xx that says what to fix', async (t) => {
  const app = await makeApp(t);
  await app.inject({ method: 'POST', url: '/api/v1/browser/sessions', payload: { session_id: 's1' } });
  const badViewport = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions', payload: { viewport: { width: 0, height: 10 } } });
  t.equal(badViewport.statusCode, 422);
  t.match(badViewport.json().detail, [{ loc: ['body', 'viewport', 'width'] }]);
  for (const expires of ['0', '3601', 'soon']) {
    const res = await app.inject({ method: 'GET', url: `/api/v1/browser/sessions/s1/live-view?expires=${expires}` });
    t.equal(res.statusCode, 422, `expires=${expires} is refused`);
    t.match(res.json().detail, [{ loc: ['query', 'expires'] }]);
  }
  const noUrl = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions/s1/navigate', payload: {} });
  t.equal(noUrl.statusCode, 422);
  t.match(noUrl.json().detail, [{ loc: ['body', 'url'] }]);
  const noSelector = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions/s1/type', payload: { text: 'x' } });
  t.equal(noSelector.statusCode, 422);
  const unknownProvider = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions', headers: { 'x-provider-browser': 'chromium' } });
  t.equal(unknownProvider.statusCode, 400);
  t.match(unknownProvider.json().detail, "Unknown browser provider 'chromium'. Available: noop");
});

t.test('sessions are scoped to their owner; admins see all', async (t) => {
  const app = await makeApp(t, twoUserAuth());
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/browser/sessions' })).statusCode, 401, 'authentication is required');

  const a = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions', headers: alice, payload: { session_id: 'alice-1' } });
  t.equal(a.statusCode, 201);
  t.equal(a.json().owner_id, 'alice');
  await app.inject({ method: 'POST', url: '/api/v1/browser/sessions', headers: bob, payload: { session_id: 'bob-1' } });

  const ids = async (headers: Record<string, string>) =>
    (await app.inject({ method: 'GET', url: '/api/v1/browser/sessions', headers })).json().sessions.map((s: { session_id: string }) => s.session_id).sort();
  t.same(await ids(alice), ['alice-1'], 'alice sees only hers');
  t.same(await ids(bob), ['bob-1'], 'bob sees only his');
  t.same(await ids(root), ['alice-1', 'bob-1'], 'the admin sees all');

  const peek = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions/alice-1', headers: bob });
  t.equal(peek.statusCode, 403);
  t.match(peek.json(), { code: 'SB_ERR_BROWSER_NOT_OWNER', detail: "Browser session 'alice-1' belongs to another user" });
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/browser/sessions/alice-1/navigate', headers: bob, payload: { url: 'http://127.0.0.1/' } })).statusCode, 403);
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/browser/sessions/alice-1', headers: bob })).statusCode, 403);
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/browser/sessions/alice-1', headers: root })).statusCode, 200, 'the admin may read it');
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/browser/sessions/alice-1', headers: alice })).statusCode, 204, 'the owner may stop it');
});
