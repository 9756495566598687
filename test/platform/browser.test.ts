import t from 'tap';
import { ALICE_BOB_ROOT, apiKeyUsers, keyHeader } from '../fixtures/api-key-users.ts';
import { writeProviderPackage } from '../fixtures/provider-package.ts';
import { makeApp } from '../helpers/app.ts';

/**
 * A throwaway browser provider package with a fake page: it records the URL,
 * answers content and evaluate from it, and fails clicks on `#missing`, so the
 * success and failed-operation paths of the routes run without a browser.
 */
function fakeBrowserPackage(): string {
  return writeProviderPackage({
    name: 'fixture-fake-browser',
    provides: ['browser'],
    source: `const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64');
export const providers = [{
  type: 'fake', kind: 'browser',
  create: (name) => {
    const sessions = new Map(); const pages = new Map();
    const page = (id) => { if (!pages.has(id)) throw new Error('no page loaded'); return pages.get(id); };
    return {
      name, type: 'fake', kind: 'browser', capabilities: { sessions: true, navigation: true, screenshots: true, evaluate: true, live_view: true },
      startSession: async (owner, req) => { const s = { session_id: req.session_id ?? 'gen', owner_id: owner, status: 'active', created_at: new Date().toISOString(), viewport: req.viewport ?? null, config: req.config ?? {} }; sessions.set(s.session_id, s); return s; },
      getSession: async (id) => sessions.get(id),
      listSessions: async (owner) => [...sessions.values()].filter((s) => !owner || s.owner_id === owner),
      stopSession: async (id) => sessions.delete(id),
      watch: async (id, onFrame) => { const t = setInterval(() => onFrame({ mime: 'image/png', data: PNG }), 10); return () => clearInterval(t); },
      navigate: async (id, url) => { pages.set(id, { url, typed: '' }); return { session_id: id, url, title: 'Fake ' + url }; },
      screenshot: async (id) => (page(id), { format: 'png', data: PNG }),
      content: async (id) => ({ content: '<html>' + page(id).url + '</html>' }),
      click: async (id, selector) => { page(id); if (selector === '#missing') throw new Error('no element matches #missing'); return { session_id: id, status: 'ok' }; },
      typeText: async (id, selector, text) => { page(id).typed += text; return { session_id: id, status: 'ok' }; },
      evaluate: async (id, expression) => ({ result: expression === 'typed' ? page(id).typed : null }),
      healthcheck: async () => 'ok', close: async () => {},
    };
  },
}];\n`,
  });
}

const alice = keyHeader('alice');
const bob = keyHeader('bob');
const root = keyHeader('root');

t.test('noop mode: session records with data, page actions 501', async (t) => {
  const app = await makeApp(t);
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/browser/sessions',
    payload: { session_id: 's1', viewport: { width: 1280, height: 720 }, config: { headless: true } },
  });
  t.equal(created.statusCode, 201);
  t.match(created.json(), {
    session_id: 's1',
    owner_id: 'noop',
    status: 'active',
    viewport: { width: 1280, height: 720 },
    config: { headless: true },
  });

  const generated = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions' });
  t.equal(generated.statusCode, 201, 'the start request body is optional');
  t.match(generated.json(), { session_id: /^[0-9a-f-]{36}$/, viewport: null, config: {} });

  const dup = await app.inject({ method: 'POST', url: '/api/v1/browser/sessions', payload: { session_id: 's1' } });
  t.equal(dup.statusCode, 409);
  t.equal(dup.json().code, 'SB_ERR_BROWSER_SESSION_EXISTS');

  const list = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions' });
  t.equal(list.statusCode, 200);
  t.same(
    list
      .json()
      .sessions.map((s: { session_id: string }) => s.session_id)
      .sort(),
    ['s1', generated.json().session_id].sort(),
  );

  const info = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions/s1' });
  t.equal(info.statusCode, 200);
  t.equal(info.json().session_id, 's1');

  const nav = await app.inject({
    method: 'POST',
    url: '/api/v1/browser/sessions/s1/navigate',
    payload: { url: 'http://127.0.0.1/' },
  });
  t.equal(nav.statusCode, 501);
  t.equal(nav.json().code, 'SB_ERR_CAPABILITY_MISSING');
  t.match(
    nav.json().detail,
    /browser provider 'noop' does not support navigation \(capability 'navigation'\).*X-Provider-Browser/,
  );

  const gated: Array<[string, string, unknown, RegExp]> = [
    ['GET', 'screenshot', undefined, /screenshots/],
    ['GET', 'content', undefined, /page content/],
    ['POST', 'click', { selector: '#a' }, /clicking/],
    ['POST', 'type', { selector: '#a', text: 'x' }, /typing/],
    ['POST', 'evaluate', { expression: '1+1' }, /JavaScript \(capability 'evaluate'\)/],
    ['GET', 'live-view', undefined, /live view \(capability 'live_view'\)/],
  ];
  for (const [method, op, payload, detail] of gated) {
    const res = await app.inject({
      method: method as 'GET' | 'POST',
      url: `/api/v1/browser/sessions/s1/${op}`,
      payload: payload as object | undefined,
    });
    t.equal(res.statusCode, 501, `${op} is 501 on noop`);
    t.match(res.json().detail, detail, `${op} names what is missing`);
  }

  const del = await app.inject({ method: 'DELETE', url: '/api/v1/browser/sessions/s1' });
  t.equal(del.statusCode, 204);
  t.equal(del.body, '');
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/browser/sessions/s1' })).statusCode,
    404,
    'gone after delete',
  );
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
  const badViewport = await app.inject({
    method: 'POST',
    url: '/api/v1/browser/sessions',
    payload: { viewport: { width: 0, height: 10 } },
  });
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
  const noSelector = await app.inject({
    method: 'POST',
    url: '/api/v1/browser/sessions/s1/type',
    payload: { text: 'x' },
  });
  t.equal(noSelector.statusCode, 422);
  const unknownProvider = await app.inject({
    method: 'GET',
    url: '/api/v1/browser/sessions',
    headers: { 'x-provider-browser': 'firefox' },
  });
  t.equal(unknownProvider.statusCode, 400);
  t.match(unknownProvider.json().detail, /^Unknown browser provider 'firefox'. Available: /);
});

t.test('sessions are scoped to their owner; admins see all', async (t) => {
  const app = await makeApp(t, apiKeyUsers(ALICE_BOB_ROOT));
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/browser/sessions' })).statusCode,
    401,
    'authentication is required',
  );

  const a = await app.inject({
    method: 'POST',
    url: '/api/v1/browser/sessions',
    headers: alice,
    payload: { session_id: 'alice-1' },
  });
  t.equal(a.statusCode, 201);
  t.equal(a.json().owner_id, 'alice');
  await app.inject({ method: 'POST', url: '/api/v1/browser/sessions', headers: bob, payload: { session_id: 'bob-1' } });

  const ids = async (headers: Record<string, string>) =>
    (await app.inject({ method: 'GET', url: '/api/v1/browser/sessions', headers }))
      .json()
      .sessions.map((s: { session_id: string }) => s.session_id)
      .sort();
  t.same(await ids(alice), ['alice-1'], 'alice sees only hers');
  t.same(await ids(bob), ['bob-1'], 'bob sees only his');
  t.same(await ids(root), ['alice-1', 'bob-1'], 'the admin sees all');

  const peek = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions/alice-1', headers: bob });
  t.equal(peek.statusCode, 403);
  t.match(peek.json(), {
    code: 'SB_ERR_BROWSER_NOT_OWNER',
    detail: "Browser session 'alice-1' belongs to another user",
  });
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/browser/sessions/alice-1/navigate',
        headers: bob,
        payload: { url: 'http://127.0.0.1/' },
      })
    ).statusCode,
    403,
  );
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/api/v1/browser/sessions/alice-1', headers: bob })).statusCode,
    403,
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/browser/sessions/alice-1', headers: root })).statusCode,
    200,
    'the admin may read it',
  );
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/api/v1/browser/sessions/alice-1', headers: alice })).statusCode,
    204,
    'the owner may stop it',
  );
});

t.test('a provider with a page: actions answer data, a failed action is 400', async (t) => {
  const app = await makeApp(t, {
    provider_packages: [fakeBrowserPackage()],
    providers: { browser: { default: 'fake', instances: { fake: { type: 'fake' }, noop: { type: 'noop' } } } },
  });
  const s = '/api/v1/browser/sessions/p1';
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/browser/sessions', payload: { session_id: 'p1' } })).statusCode,
    201,
  );

  const early = await app.inject({ method: 'GET', url: `${s}/content` });
  t.equal(early.statusCode, 400, 'an operation that fails is 400');
  t.match(early.json(), {
    code: 'SB_ERR_BROWSER_ACTION_FAILED',
    detail: "Browser reading page content failed on session 'p1': no page loaded",
  });

  const nav = await app.inject({ method: 'POST', url: `${s}/navigate`, payload: { url: 'http://127.0.0.1:9/page' } });
  t.equal(nav.statusCode, 200);
  t.same(nav.json(), { session_id: 'p1', url: 'http://127.0.0.1:9/page', title: 'Fake http://127.0.0.1:9/page' });
  t.same((await app.inject({ method: 'GET', url: `${s}/content` })).json(), {
    content: '<html>http://127.0.0.1:9/page</html>',
  });
  t.same((await app.inject({ method: 'POST', url: `${s}/type`, payload: { selector: '#q', text: 'ada' } })).json(), {
    session_id: 'p1',
    status: 'ok',
  });
  t.same((await app.inject({ method: 'POST', url: `${s}/click`, payload: { selector: '#go' } })).json(), {
    session_id: 'p1',
    status: 'ok',
  });
  t.same((await app.inject({ method: 'POST', url: `${s}/evaluate`, payload: { expression: 'typed' } })).json(), {
    result: 'ada',
  });
  const shot = await app.inject({ method: 'GET', url: `${s}/screenshot` });
  t.equal(shot.json().format, 'png');
  t.same([...Buffer.from(shot.json().data, 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  const view = (await app.inject({ method: 'GET', url: `${s}/live-view` })).json();
  t.match(
    view,
    {
      session_id: 'p1',
      url: /^http:\/\/localhost(:\d+)?\/api\/v1\/browser\/live\/p1\?p=fake&exp=\d+&sig=/,
      expires: 300,
    },
    'expires defaults to 300; the link is signed',
  );
  t.equal((await app.inject({ method: 'GET', url: `${s}/live-view?expires=3600` })).json().expires, 3600);

  const missing = await app.inject({ method: 'POST', url: `${s}/click`, payload: { selector: '#missing' } });
  t.equal(missing.statusCode, 400);
  t.match(missing.json().detail, /no element matches #missing/);

  // The same session id on the noop instance is unknown there: routing picks the provider per request.
  t.equal((await app.inject({ method: 'GET', url: s, headers: { 'x-provider-browser': 'noop' } })).statusCode, 404);
});
