import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { adminBasic } from '../helpers/registry-auth.ts';

/** The errors a first-hour user meets say what to fix (issue 15). */

t.test('memory content must be a string: 42 is a 422 and nothing is stored', async (t) => {
  const app = await makeApp(t);
  const bad = await app.inject({ method: 'POST', url: '/api/v1/memory/notes', payload: { key: 'n', content: 42 } });
  t.equal(bad.statusCode, 422, bad.body);
  t.same(bad.json().detail, [{ loc: ['body', 'content'], msg: 'must be string', type: 'type' }]);
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/memory/notes/n' })).statusCode, 404, 'nothing stored');
  const good = await app.inject({ method: 'POST', url: '/api/v1/memory/notes', payload: { key: 'n', content: '42' } });
  t.equal(good.statusCode, 201, 'the string "42" is fine');
  // Querystrings are text on the wire: their numbers are still read as numbers.
  const listed = await app.inject({ method: 'GET', url: '/api/v1/memory/notes?limit=1' });
  t.equal(listed.statusCode, 200, listed.body);
  t.equal(listed.json().records.length, 1);
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/memory/notes?limit=many' })).statusCode, 422);
});

t.test('an invalid resource.type lists the allowed values once', async (t) => {
  const app = await makeApp(t);
  const res = await app.inject({
    method: 'POST',
    url: '/api/tokens/generate',
    headers: adminBasic(app),
    payload: { resource: { type: 'nope', id: '/x' } },
  });
  t.equal(res.statusCode, 422, res.body);
  const detail = res.json().detail as Array<{ loc: unknown[]; msg: string }>;
  t.equal(detail.length, 1, 'one item, not one per branch of the union');
  t.same(detail[0].loc, ['body', 'resource', 'type']);
  t.match(detail[0].msg, /^must be one of "server", .*"agent".*"skill"/);
  t.notMatch(res.body, /must be equal to constant|must match a schema in anyOf/);
});

t.test('GET /api/servers/register is a 405 pointing at POST', async (t) => {
  const app = await makeApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/servers/register', headers: adminBasic(app) });
  t.equal(res.statusCode, 405, res.body);
  t.equal(res.headers.allow, 'POST');
  t.same(res.json(), {
    detail: 'GET is not allowed on /api/servers/register; use POST to register a server',
    code: 'SB_ERR_METHOD_NOT_ALLOWED',
  });
  // Other unknown servers are still a 404 that names them.
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/servers/nothing-here', headers: adminBasic(app) })).statusCode,
    404,
  );
});
