import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Type } from '@sinclair/typebox';
import { loadSettings, validateSection } from '../../core/config.ts';
import { tempDir } from '../helpers/app.ts';

const clean = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, ...extra });

function file(name: string, text: string): string {
  const p = join(tempDir('sb-config-'), name);
  writeFileSync(p, text);
  return p;
}

t.test('embedded defaults with no env and no config', async (t) => {
  const s = loadSettings({ env: clean() });
  t.equal(s.port, 7860);
  t.equal(s.host, '127.0.0.1');
  t.equal(s.dataDir, resolve('data'));
  t.equal(s.logLevel, 'info');
  t.same(s.surfaces, ['registry', 'platform']);
  t.same(s.store, { backend: 'sqlite', url: undefined });
});

t.test('env settings: PORT, HOST, DATA_DIR, LOG_LEVEL, REDIS_URL', async (t) => {
  const s = loadSettings({
    env: clean({
      PORT: '9001',
      HOST: '0.0.0.0',
      DATA_DIR: '/tmp/sb-x',
      LOG_LEVEL: 'debug',
      REDIS_URL: 'redis://127.0.0.1:6379/2',
    }),
  });
  t.equal(s.port, 9001);
  t.equal(s.host, '0.0.0.0');
  t.equal(s.dataDir, '/tmp/sb-x');
  t.equal(s.logLevel, 'debug');
  t.same(s.store, { backend: 'redis', url: 'redis://127.0.0.1:6379/2' });
  t.equal(loadSettings({ env: clean({ PORT: '0' }) }).port, 0, 'PORT=0 picks a free port');
  t.equal(loadSettings({ env: clean({ REDIS_URL: '' }) }).store.backend, 'sqlite', 'an empty REDIS_URL is unset');
});

t.test('bad env values name the variable', async (t) => {
  t.throws(() => loadSettings({ env: clean({ PORT: 'eighty' }) }), {
    code: 'SB_ERR_CONFIG_INVALID',
    message: /PORT: 'eighty'/,
  });
  t.throws(() => loadSettings({ env: clean({ PORT: '70000' }) }), { message: /PORT/ });
  t.throws(() => loadSettings({ env: clean({ LOG_LEVEL: 'loud' }) }), {
    code: 'SB_ERR_CONFIG_INVALID',
    message: /LOG_LEVEL: 'loud'/,
  });
});

t.test('SWITCHBOARD_CONFIG: YAML with ${ENV} and ${ENV:-default}', async (t) => {
  const path = file(
    'switchboard.yaml',
    `port: 7000
log_level: warn
data_dir: ./state
store:
  url: \${SB_TEST_REDIS}
provider_packages: [./pkgs/mine]
providers:
  memory:
    default: \${SB_TEST_MEMORY:-in_memory}
    locked: true
registry:
  title: "Acme \${SB_TEST_UNSET:-registry}"
`,
  );
  const s = loadSettings({ env: clean({ SWITCHBOARD_CONFIG: path, SB_TEST_REDIS: 'redis://10.0.0.1:6379' }) });
  t.equal(s.port, 7000);
  t.equal(s.logLevel, 'warn');
  t.equal(s.dataDir, join(path, '..', 'state'), 'data_dir in a config file is relative to the file');
  t.equal(s.configDir, resolve(path, '..'));
  t.same(s.store, { backend: 'redis', url: 'redis://10.0.0.1:6379' });
  t.equal(s.config.providers?.memory?.default, 'in_memory', 'fallback used');
  t.equal(s.config.providers?.memory?.locked, true);
  t.same(s.config.registry, { title: 'Acme registry' });
  const withEnv = loadSettings({
    env: clean({ SWITCHBOARD_CONFIG: path, SB_TEST_REDIS: 'redis://x', SB_TEST_MEMORY: 'durable', PORT: '7100' }),
  });
  t.equal(withEnv.config.providers?.memory?.default, 'durable', 'a set variable wins over its fallback');
  t.equal(withEnv.port, 7100, 'env PORT wins over the file');
});

t.test('SWITCHBOARD_CONFIG: JSON', async (t) => {
  const path = file('c.json', JSON.stringify({ host: '::1', surfaces: ['platform'], body_limit_bytes: 4096 }));
  const s = loadSettings({ env: clean({ SWITCHBOARD_CONFIG: path }) });
  t.equal(s.host, '::1');
  t.same(s.surfaces, ['platform']);
  t.equal(s.config.body_limit_bytes, 4096);
});

t.test('a bad config names the key', async (t) => {
  const bad =
    (text: string, name = 'bad.yaml') =>
    () =>
      loadSettings({ env: clean({ SWITCHBOARD_CONFIG: file(name, text) }) });
  t.throws(bad('port: high\n'), { code: 'SB_ERR_CONFIG_INVALID', message: /Invalid config key 'port'/ });
  t.throws(bad('providers:\n  memory:\n    locked: "yes"\n'), {
    message: /Invalid config key 'providers\.memory\.locked'/,
  });
  t.throws(bad('providers:\n  memroy: {}\n'), { message: /providers\.memroy/ });
  t.throws(bad('prot: 1\n'), { message: /'prot'/ });
  t.throws(bad('providers:\n  memory:\n    instances:\n      a: {options: {}}\n'), {
    message: /providers\.memory\.instances\.a\.type/,
  });
  t.throws(bad('store:\n  backend: mongo\n'), { message: /store\.backend/ });
  t.throws(bad('store:\n  url: ${SB_TEST_NOT_SET}\n'), {
    code: 'SB_ERR_CONFIG_INVALID',
    message: /'store\.url' refers to environment variable SB_TEST_NOT_SET/,
  });
  t.throws(bad('port: [1,\n'), { code: 'SB_ERR_CONFIG_UNREADABLE', message: /not valid YAML/ });
  t.throws(bad('{"port": ', 'bad.json'), { code: 'SB_ERR_CONFIG_UNREADABLE', message: /not valid JSON/ });
  t.throws(() => loadSettings({ env: clean({ SWITCHBOARD_CONFIG: '/nonexistent/sb.yaml' }) }), {
    code: 'SB_ERR_CONFIG_UNREADABLE',
    message: /Cannot read config file \/nonexistent\/sb\.yaml/,
  });
});

t.test('validateSection applies defaults and names the failing key under its prefix', async (t) => {
  const schema = Type.Object({
    ttl: Type.Integer({ minimum: 1, default: 60 }),
    mode: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
  });
  t.same(validateSection(schema, undefined, 'registry.cache'), { ttl: 60 });
  t.throws(() => validateSection(schema, { ttl: 0 }, 'registry.cache'), {
    code: 'SB_ERR_CONFIG_INVALID',
    message: /'registry\.cache\.ttl'/,
  });
});
