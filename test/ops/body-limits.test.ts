import t from 'tap';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';

// Issue 13 item 2: JSON nested ~2000 deep in `config`/`metadata` was stored, answered 500, and from then
// on the lists that held it answered 500 for everyone. The body parsers now refuse it with a 422 that
// names the limit and where, before any handler runs.

/** `{"a":{"a":...1...}}`, `depth` objects deep, as text (a JS value that deep would not stringify). */
function nestedText(depth: number, leaf = '1'): string {
  return '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
}

function objectWithKeys(n: number): string {
  return `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;
}

/** A route whose body is any JSON, so the limits are seen without a schema in the way. */
async function echo(app: FastifyInstance) {
  app.post('/test/echo', { schema: { body: Type.Unknown(), response: { 200: Type.Unknown() } } }, async (request) => ({
    got: request.body,
  }));
}

type LimitItem = { loc: Array<string | number>; msg: string; type: string };

t.test('a browser session with deeply nested config is refused and the list keeps working', async (t) => {
  const app = await makeApp(t);
  const before = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions' });
  t.equal(before.statusCode, 200);
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/browser/sessions',
    headers: { 'content-type': 'application/json' },
    payload: `{"config":${nestedText(2000)}}`,
  });
  t.equal(res.statusCode, 422);
  const body = res.json() as { detail: LimitItem[]; code: string };
  t.equal(body.code, 'SB_ERR_JSON_TOO_DEEP');
  t.same(body.detail[0].loc.slice(0, 3), ['body', 'config', 'a'], 'loc says where');
  t.equal(body.detail[0].loc.length, 33, 'the path to the first container past the limit');
  t.match(body.detail[0].msg, /32 levels.*json_limits\.max_depth/, 'msg names the limit and its config key');
  const after = await app.inject({ method: 'GET', url: '/api/v1/browser/sessions' });
  t.equal(after.statusCode, 200);
  t.same(after.json(), before.json(), 'nothing was stored');
});

t.test('registry register with deep metadata: 422 (not 503), nothing stored, JSON and form alike', async (t) => {
  const app = await makeApp(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const fields = { name: 'deep', description: 'd', path: '/deep', proxy_pass_url: 'http://example.com/mcp' };
  const json = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...admin, 'content-type': 'application/json' },
    payload: `${JSON.stringify(fields).slice(0, -1)},"metadata":${nestedText(2000)}}`,
  });
  t.equal(json.statusCode, 422, json.body.slice(0, 300));
  t.equal(json.json().code, 'SB_ERR_JSON_TOO_DEEP');
  t.same(json.json().detail[0].loc.slice(0, 2), ['body', 'metadata']);

  const form = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...admin, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...fields, metadata: nestedText(2000) }).toString(),
  });
  t.equal(form.statusCode, 422, 'a form field that carries JSON gets the same check');
  t.same(form.json().detail[0].loc.slice(0, 3), ['body', 'metadata', 'a']);

  const list = await app.inject({ method: 'GET', url: '/api/servers', headers: admin });
  t.equal(list.statusCode, 200);
  t.notMatch(list.body, /"\/deep"/, 'the server was not registered');
  const ok = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: { ...fields, metadata: JSON.parse(nestedText(10)) },
  });
  t.equal(ok.statusCode, 201, 'ordinary nesting still registers');
});

t.test('the limits sit exactly where configured; strings do not count', async (t) => {
  const app = await makeApp(t, {}, { beforeSurfaces: echo });
  const post = (payload: string) =>
    app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload });
  t.equal((await post(nestedText(32))).statusCode, 200, 'depth 32 (the body is level 1) passes');
  t.equal((await post(nestedText(33))).statusCode, 422, 'depth 33 does not');
  t.equal((await post(`[${'['.repeat(31)}${']'.repeat(31)}]`)).statusCode, 200, 'arrays count as levels too: 32 pass');
  t.equal((await post(`[${'['.repeat(32)}${']'.repeat(32)}]`)).statusCode, 422, 'and 33 do not');
  const brackets = JSON.stringify({ s: `${'[{'.repeat(5000)}\\"\\\\"{` });
  const echoed = await post(brackets);
  t.equal(echoed.statusCode, 200, 'brackets and escaped quotes inside strings are text');
  t.same(echoed.json(), { got: JSON.parse(brackets) });

  t.equal((await post(objectWithKeys(1000))).statusCode, 200, '1000 members pass');
  const wide = await post(`{"meta":{"deep":${objectWithKeys(1001)}}}`);
  t.equal(wide.statusCode, 422, '1001 do not');
  t.equal(wide.json().code, 'SB_ERR_JSON_OBJECT_TOO_LARGE');
  t.same(wide.json().detail[0].loc, ['body', 'meta', 'deep'], 'loc names the object');
  t.match(wide.json().detail[0].msg, /1000 members.*json_limits\.max_object_keys/);
  t.equal(
    (await post(`[${Array.from({ length: 5000 }, () => '1').join(',')}]`)).statusCode,
    200,
    'long arrays are not objects',
  );

  const unicode = await post(`{"ключ 🔑":${nestedText(40)}}`);
  t.same(unicode.json().detail[0].loc.slice(0, 3), ['body', 'ключ 🔑', 'a'], 'unicode keys are shown as sent');

  const configured = await makeApp(t, { json_limits: { max_depth: 4, max_object_keys: 3 } }, { beforeSurfaces: echo });
  const post2 = (payload: string) =>
    configured.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload });
  t.equal((await post2(nestedText(4))).statusCode, 200);
  t.match((await post2(nestedText(5))).json().detail[0].msg, /4 levels/);
  t.equal((await post2(objectWithKeys(3))).statusCode, 200);
  t.equal((await post2(objectWithKeys(4))).statusCode, 422);
  await t.rejects(
    makeApp(t, { json_limits: { max_depth: 100_000 } }),
    { code: 'SB_ERR_CONFIG_INVALID', message: /json_limits/ },
    'a depth that could overflow the stack is refused at startup',
  );
});

t.test('prototype keys are refused with a detail that says why, on both surfaces', async (t) => {
  const app = await makeApp(t, {}, { beforeSurfaces: echo });
  for (const payload of ['{"__proto__":{"admin":true}}', '{"a":{"constructor":{"prototype":{"x":1}}}}']) {
    const registry = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    t.equal(registry.statusCode, 422, payload);
    t.equal(registry.json().code, 'SB_ERR_JSON_FORBIDDEN_KEY');
    const platform = await app.inject({
      method: 'POST',
      url: '/api/v1/browser/sessions',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    t.equal(platform.statusCode, 400, `platform: ${payload}`);
    t.match(platform.json().detail, /__proto__/);
  }
  t.equal(({} as Record<string, unknown>).admin, undefined, 'no prototype was polluted');
});

t.test('numbers that are not finite are refused: in JSON bodies and in coerced query parameters', async (t) => {
  // Found by test/fuzz/routes.test.ts: ?limit=1e309 passed Ajv's integer and maximum as Infinity and the
  // response serialiser answered 500.
  const app = await makeApp(t, {}, { beforeSurfaces: echo });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  for (const q of ['limit=1e309', 'limit=Infinity', 'offset=-1e400']) {
    const res = await app.inject({ method: 'GET', url: `/api/skills?${q}`, headers: admin });
    t.equal(res.statusCode, 422, q);
    t.equal(res.json().code, 'SB_ERR_VALIDATION');
  }
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/skills?limit=5', headers: admin })).statusCode,
    200,
    'a finite limit still works',
  );
  const body = await app.inject({
    method: 'POST',
    url: '/test/echo',
    headers: { 'content-type': 'application/json' },
    payload: '{"a":[1,{"n":1e309}]}',
  });
  t.equal(body.statusCode, 422);
  t.equal(body.json().code, 'SB_ERR_JSON_NUMBER_OUT_OF_RANGE');
  t.same(body.json().detail[0].loc, ['body', 'a', 1, 'n']);
  const fine = await app.inject({
    method: 'POST',
    url: '/test/echo',
    headers: { 'content-type': 'application/json' },
    payload: '{"a":1e300,"s":"e999"}',
  });
  t.equal(fine.statusCode, 200, 'large finite numbers and strings that look like exponents pass');
});

t.test('half a surrogate pair in a JSON string or key is refused, naming where; whole pairs pass', async (t) => {
  // Found by test/fuzz/routes.test.ts: a memory event's branch "\ud800" reached a key encoder and answered 500.
  const app = await makeApp(t, {}, { beforeSurfaces: echo });
  const post = (payload: string) =>
    app.inject({ method: 'POST', url: '/test/echo', headers: { 'content-type': 'application/json' }, payload });
  for (const [payload, loc] of [
    ['{"messages":[{"text":"a"}],"branch":"x\\ud800"}', ['body', 'branch']],
    ['{"list":["ok","\\udc00 low alone"]}', ['body', 'list', 1]],
    ['{"m":{"\\ud83d":1}}', ['body', 'm', '\ud83d']],
  ] as const) {
    const res = await post(payload);
    t.equal(res.statusCode, 422, payload);
    t.equal(res.json().code, 'SB_ERR_JSON_UNPAIRED_SURROGATE');
    t.same(res.json().detail[0].loc, loc, `loc of ${payload}`);
    t.match(res.json().detail[0].msg, /surrogate pair.*send well-formed text/);
  }
  const emoji = await post('{"s":"\\ud83d\\ude00","t":"\\\\ud800 is text here"}');
  t.equal(emoji.statusCode, 200, 'a whole pair, and an escaped backslash before u, pass');
  t.same(emoji.json(), { got: { s: '😀', t: '\\ud800 is text here' } });
  const memory = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/sessions/a/s/events',
    headers: { 'content-type': 'application/json' },
    payload: '{"messages":[{"text":"hi","role":"user"}],"branch":"\\ud800"}',
  });
  t.equal(memory.statusCode, 422, `the fuzzer's request: ${memory.body}`);
});
