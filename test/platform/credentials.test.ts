import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { openStore } from '../../core/store.ts';
import { buildApp } from '../../plugins/app.ts';
import { apiKeyUsers, keyHeader } from '../fixtures/api-key-users.ts';
import { makeApp, tempDir } from '../helpers/app.ts';

const SECRET = 'sk-live-abcdefghijklmnop9876';
const url = '/api/v1/credentials';

t.test('write, read masked, delete one attribute', async (t) => {
  const app = await makeApp(t);
  t.same((await app.inject({ method: 'GET', url })).json(), { attributes: {} }, 'nothing stored yet');

  const put = await app.inject({
    method: 'PUT',
    url,
    payload: { attributes: { openai_api_key: SECRET, pin: '1234', 'langfuse.public-key': 'pk-lf-0000111122223333' } },
  });
  t.equal(put.statusCode, 200);
  t.same(
    put.json(),
    { status: 'updated', attributes: { openai_api_key: '****9876', pin: '****', 'langfuse.public-key': '****3333' } },
    'last 4 visible; short values show nothing',
  );
  t.notOk(put.body.includes(SECRET.slice(0, 12)), 'the value is not echoed');

  const more = await app.inject({
    method: 'PUT',
    url,
    payload: { attributes: { github_token: 'ghp_zzzzzzzzzzzz4321' } },
  });
  t.same(
    Object.keys(more.json().attributes).sort(),
    ['github_token', 'langfuse.public-key', 'openai_api_key', 'pin'],
    'writes merge with what is stored',
  );

  const read = await app.inject({ method: 'GET', url });
  t.equal(read.json().attributes.openai_api_key, '****9876');
  t.notOk(read.body.includes(SECRET.slice(0, 12)));
  const raw = await app.sb.store.collection<Record<string, string>>('platform_credentials').get('noop');
  t.ok(raw?.openai_api_key, 'the attribute is in the core store');
  t.notOk(JSON.stringify(raw).includes(SECRET.slice(-8)), 'encrypted at rest: no part of the value is in clear');

  const deleted = await app.inject({ method: 'DELETE', url: `${url}/pin` });
  t.equal(deleted.statusCode, 200, 'a JSON answer, as the reference client expects');
  t.same(deleted.json(), { status: 'deleted', key: 'pin' });
  const again = await app.inject({ method: 'DELETE', url: `${url}/pin` });
  t.equal(again.statusCode, 404);
  t.match(again.json(), {
    code: 'SB_ERR_CREDENTIALS_NOT_FOUND',
    detail: "No credential attribute 'pin' is stored for you",
  });
  t.notOk('pin' in (await app.inject({ method: 'GET', url })).json().attributes);
});

t.test('bad writes are 422 naming the field', async (t) => {
  const app = await makeApp(t);
  const empty = await app.inject({ method: 'PUT', url, payload: { attributes: {} } });
  t.equal(empty.statusCode, 422);
  t.match(empty.json().detail, [{ loc: ['body', 'attributes'] }]);
  t.equal((await app.inject({ method: 'PUT', url, payload: { attributes: { 'bad name!': 'x' } } })).statusCode, 422);
  const notString = await app.inject({ method: 'PUT', url, payload: { attributes: { a: { nested: true } } } });
  t.equal(notString.statusCode, 422);
  t.notOk(notString.body.includes('nested'), 'the rejected value is not echoed');
  t.equal((await app.inject({ method: 'PUT', url, payload: {} })).statusCode, 422);
});

t.test('attributes belong to their principal', async (t) => {
  const app = await makeApp(t, apiKeyUsers({ alice: {}, bob: {} }));
  await app.inject({
    method: 'PUT',
    url,
    headers: keyHeader('alice'),
    payload: { attributes: { openai_api_key: SECRET } },
  });
  t.same(
    (await app.inject({ method: 'GET', url, headers: keyHeader('bob') })).json(),
    { attributes: {} },
    'bob does not see alice’s attributes',
  );
  t.equal(
    (await app.inject({ method: 'DELETE', url: `${url}/openai_api_key`, headers: keyHeader('bob') })).statusCode,
    404,
    'nor delete them',
  );
  t.same((await app.inject({ method: 'GET', url, headers: keyHeader('alice') })).json(), {
    attributes: { openai_api_key: '****9876' },
  });
  t.equal((await app.inject({ method: 'GET', url })).statusCode, 401, 'authentication is required');
});

t.test('attributes survive a restart on the SQLite store', async (t) => {
  // The same DATA_DIR keeps the same generated ENCRYPTION_KEY, as a real restart would.
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir };
  const first = await makeApp(t, {}, { env, store: await openStore({ backend: 'sqlite', dataDir }) });
  await first.inject({ method: 'PUT', url, payload: { attributes: { openai_api_key: SECRET } } });
  await first.close();
  await first.sb.store.close();
  const store = await openStore({ backend: 'sqlite', dataDir });
  t.teardown(() => store.close());
  const second = await makeApp(t, {}, { env, store });
  t.same((await second.inject({ method: 'GET', url })).json(), { attributes: { openai_api_key: '****9876' } });
  // Another DATA_DIR means another generated key (unless ENCRYPTION_KEY pins one): the value cannot be opened, and is not guessed at.
  if (process.env.ENCRYPTION_KEY) return;
  const otherKey = await makeApp(t, {}, { env: { DATA_DIR: tempDir() }, store });
  t.same(
    (await otherKey.inject({ method: 'GET', url })).json(),
    { attributes: { openai_api_key: '****' } },
    'undecryptable values show fully masked',
  );
});

t.test('status: source follows server_credentials mode and what the caller has', async (t) => {
  const fallback = await makeApp(t);
  const status = async (app: typeof fallback, headers: Record<string, string> = {}) =>
    (await app.inject({ method: 'GET', url: `${url}/status`, headers })).json();
  t.same(
    await status(fallback),
    { source: 'server', aws_configured: false, server_credentials: 'fallback', required_credentials: [] },
    'default: fallback to the server',
  );
  t.equal((await status(fallback, { 'x-cred-openai-api-key': 'sk-x' })).source, 'headers');
  t.equal(
    (await status(fallback, { 'x-cloud-access-key-id': 'AKIA0000', 'x-cloud-secret-access-key': 's' })).source,
    'headers',
  );
  await fallback.inject({ method: 'PUT', url, payload: { attributes: { openai_api_key: SECRET } } });
  t.equal((await status(fallback)).source, 'oidc', 'stored profile attributes');
  t.equal(
    (await status(fallback, { 'x-cred-openai-api-key': 'sk-x' })).source,
    'headers',
    'headers win over the profile',
  );

  const never = await makeApp(t, {
    platform: {
      credentials: {
        server_credentials: 'never',
        required_credentials: ['openai', 'langfuse'],
        cloud_role_arn: 'arn:aws:iam::1:role/x',
      },
    },
  });
  t.same(await status(never), {
    source: 'none',
    aws_configured: true,
    server_credentials: 'never',
    required_credentials: ['openai', 'langfuse'],
  });

  const always = await makeApp(t, { platform: { credentials: { server_credentials: 'always' } } });
  t.equal((await status(always, { 'x-cred-openai-api-key': 'sk-x' })).source, 'server', 'always uses the server’s');
});

t.test('a bad platform.credentials section stops startup naming the key', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: tempDir() };
  delete env.SWITCHBOARD_CONFIG;
  await t.rejects(
    buildApp({
      env,
      config: { platform: { credentials: { server_credentials: 'sometimes' } } },
      store: await openStore({ backend: 'memory' }),
      logLevel: 'silent',
    }).then((app) => app.ready()),
    { code: 'SB_ERR_CONFIG_INVALID', message: /platform\.credentials\.server_credentials/ },
  );
  await t.rejects(
    buildApp({
      env,
      config: { platform: { credentials: { extra: 1 } } },
      store: await openStore({ backend: 'memory' }),
      logLevel: 'silent',
    }).then((app) => app.ready()),
    { code: 'SB_ERR_CONFIG_INVALID', message: /platform\.credentials/ },
  );
});

t.test('credential values never reach the logs, even at trace level', async (t) => {
  // pino writes to fd 1 directly, so the app runs in a child process whose stdout is captured whole.
  const root = new URL('../../', import.meta.url);
  const dir = tempDir('sb-cred-logs-');
  const script = join(dir, 'run.mts');
  writeFileSync(
    script,
    `import { buildApp } from ${JSON.stringify(new URL('plugins/app.ts', root).pathname)};
import { openStore } from ${JSON.stringify(new URL('core/store.ts', root).pathname)};
const env = { ...process.env, DATA_DIR: ${JSON.stringify(dir)} };
delete env.SWITCHBOARD_CONFIG; delete env.REDIS_URL; delete env.LOG_LEVEL;
const app = await buildApp({ env, config: {}, store: await openStore({ backend: 'memory' }), logLevel: 'trace' });
await app.ready();
const secret = ${JSON.stringify(SECRET)};
await app.inject({ method: 'PUT', url: '/api/v1/credentials', payload: { attributes: { openai_api_key: secret } } });
await app.inject({ method: 'PUT', url: '/api/v1/credentials', payload: { attributes: { 'bad name': secret } } });
await app.inject({ method: 'PUT', url: '/api/v1/credentials', payload: '{"attributes": {"x": "' + secret });
await app.inject({ method: 'GET', url: '/api/v1/credentials' });
await app.inject({ method: 'GET', url: '/api/v1/credentials/status', headers: { 'x-cred-openai-api-key': secret } });
await app.close();
`,
  );
  const { spawnSync } = await import('node:child_process');
  const out = spawnSync(process.execPath, ['--import', 'tsx', script], {
    cwd: new URL('.', root).pathname,
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(out.status, 0, `the child ran: ${out.stderr.slice(0, 500)}`);
  t.match(out.stdout, /"url":"\/api\/v1\/credentials"/, 'requests were logged, so the check below means something');
  t.notOk(out.stdout.includes(SECRET), 'the secret is in no log line');
  t.notOk(out.stderr.includes(SECRET), 'nor on stderr');
});
