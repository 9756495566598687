import t from 'tap';
import { makeApp } from '../helpers/app.ts';

const KEYS = [
  { key: 'sk-alice-0123456789', principal_id: 'alice', groups: ['research'], scopes: ['memory:write'] },
  { key: 'sk-admin-0123456789', principal_id: 'ops', admin: true },
  { key: 'sk-robot-0123456789', principal_id: 'ingest-bot', type: 'service' },
];
const config = {
  providers: { auth: { default: 'keys', instances: { keys: { type: 'api_key', options: { keys: KEYS } } } } },
};

t.test('api_key: Bearer and X-Api-Key admit the configured principals', async (t) => {
  const app = await makeApp(t, config);
  let res = await app.inject({ url: '/api/v1/auth/whoami', headers: { authorization: 'Bearer sk-alice-0123456789' } });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { id: 'alice', type: 'user', is_admin: false, groups: ['research'], scopes: ['memory:write'] });

  res = await app.inject({ url: '/api/v1/auth/whoami', headers: { 'x-api-key': 'sk-admin-0123456789' } });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { id: 'ops', type: 'user', is_admin: true, groups: [], scopes: [] });

  res = await app.inject({ url: '/api/v1/auth/whoami', headers: { authorization: 'bearer sk-robot-0123456789' } });
  t.equal(res.json().type, 'service', 'the Bearer scheme is case-insensitive; type comes from the key entry');
});

t.test('api_key: missing, unknown or non-Bearer credentials are 401 with WWW-Authenticate', async (t) => {
  const app = await makeApp(t, config);
  const cases: Array<[string, Record<string, string>]> = [
    ['no credential', {}],
    ['unknown key', { authorization: 'Bearer sk-nobody-0123456789' }],
    ['key with a suffix', { 'x-api-key': 'sk-alice-0123456789x' }],
    ['Basic scheme', { authorization: `Basic ${Buffer.from('alice:sk-alice-0123456789').toString('base64')}` }],
  ];
  for (const [why, headers] of cases) {
    const res = await app.inject({ url: '/api/v1/auth/whoami', headers });
    t.equal(res.statusCode, 401, why);
    t.equal(res.headers['www-authenticate'], 'Bearer', why);
    t.same(res.json(), { detail: 'Invalid or missing credentials', code: 'SB_ERR_AUTH_INVALID' }, why);
  }
  const other = await app.inject({ url: '/api/v1/providers', headers: { 'x-api-key': 'wrong-key-000000' } });
  t.equal(other.statusCode, 401, 'every /api/v1 route is behind the backend');
});

t.test('api_key: /auth/config is exempt and shows no key; ops routes are untouched', async (t) => {
  const app = await makeApp(t, config);
  const res = await app.inject({ url: '/auth/config' });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { backend: 'api_key', enabled: true });
  t.notMatch(res.body, /sk-/, 'no key material in the public config');
  t.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
});

t.test('api_key: bad options stop startup with a message naming the option', async (t) => {
  await t.rejects(
    makeApp(t, {
      providers: {
        auth: {
          default: 'keys',
          instances: { keys: { type: 'api_key', options: { keys: [{ key: 'short', principal_id: 'x' }] } } },
        },
      },
    }),
    /keys\.0\.key/,
  );
  await t.rejects(
    makeApp(t, {
      providers: {
        auth: {
          default: 'keys',
          instances: { keys: { type: 'api_key', options: { keys: [KEYS[0], { ...KEYS[1], key: KEYS[0].key }] } } },
        },
      },
    }),
    /listed twice/,
  );
});
