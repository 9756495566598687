import t from 'tap';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { discoverPackages } from '../../core/discovery.ts';
import { StartupError } from '../../core/errors.ts';
import { buildApp } from '../../plugins/app.ts';
import { makeApp, tempDir } from '../helpers/app.ts';

const FIX = fileURLToPath(new URL('../fixtures/', import.meta.url));
const broken = (name: string) => join(FIX, 'broken', name);

async function startupError(fn: () => Promise<unknown>): Promise<StartupError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof StartupError) return err;
    throw err;
  }
  throw new Error('expected a StartupError, got success');
}

t.test('a broken package stops discovery with a coded error naming it and the reason', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['no-entry', 'sb-broken-no-entry', /entry \.\/missing\.ts does not exist/],
    ['no-manifest', 'sb-broken-no-manifest', /no "switchboard" section/],
    ['unknown-primitive', 'sb-broken-unknown-primitive', /unknown primitive 'teleport'/],
    [
      'undeclared-kind',
      'sb-broken-undeclared-kind',
      /provider 'sneaky' serves 'llm', which package\.json does not declare/,
    ],
    ['throws', 'sb-broken-throws', /failed to load: the SDK this package needs is not installed/],
  ];
  for (const [dir, pkg, reason] of cases) {
    const err = await startupError(() => discoverPackages([broken(dir)]));
    t.equal(err.code, 'SB_ERR_PROVIDER_PACKAGE_INVALID', `${dir}: code`);
    t.match(err.message, `Provider package '${pkg}' is broken`, `${dir}: names the package`);
    t.match(err.message, reason, `${dir}: says why`);
  }
});

t.test('a path in provider_packages without a package.json is named', async (t) => {
  const missing = join(tempDir(), 'nowhere');
  const err = await startupError(() => discoverPackages([missing]));
  t.equal(err.code, 'SB_ERR_PROVIDER_PACKAGE_INVALID');
  t.match(err.message, 'nowhere');
  t.match(err.message, 'no package.json');
});

t.test('buildApp refuses to start with a broken package from the config', async (t) => {
  const err = await startupError(() =>
    buildApp({ config: { provider_packages: [broken('throws')] }, env: { DATA_DIR: tempDir() }, logLevel: 'silent' }),
  );
  t.match(err.message, "'sb-broken-throws'");
});

t.test('config paths are resolved against the config directory and discovered', async (t) => {
  const pkgs = await discoverPackages(['providers/probe'], FIX);
  const probe = pkgs.find((p) => p.name === 'sb-fixture-probe');
  t.ok(probe, 'fixture found');
  t.equal(probe?.source, 'config');
  t.same(probe?.manifest.provides, ['memory', 'tools']);
  t.same(probe?.factories.map((f) => f.type).sort(), ['probe', 'probe_tools']);
  t.ok(
    pkgs.some((p) => p.source === 'builtin' && p.name === '@switchboard/provider-noop'),
    'built-ins come too',
  );
});

/** A project root whose package.json depends on a package that declares itself (and one that does not). */
function dependencyRoot(entryBody: string): string {
  const root = tempDir('sb-dep-root-');
  writeFileSync(
    join(root, 'package.json'),
    JSON.stringify({ name: 'host', dependencies: { 'sb-dep-memory': '1.0.0', 'plain-dep': '1.0.0' } }),
  );
  const dep = join(root, 'node_modules', 'sb-dep-memory');
  mkdirSync(dep, { recursive: true });
  writeFileSync(
    join(dep, 'package.json'),
    JSON.stringify({
      name: 'sb-dep-memory',
      version: '1.0.0',
      type: 'module',
      switchboard: { provides: ['memory'], entry: './index.js' },
    }),
  );
  writeFileSync(join(dep, 'index.js'), entryBody);
  const plain = join(root, 'node_modules', 'plain-dep');
  mkdirSync(plain, { recursive: true });
  writeFileSync(join(plain, 'package.json'), JSON.stringify({ name: 'plain-dep', version: '1.0.0' }));
  return root;
}

const DEP_ENTRY = `
const records = new Map();
export const providers = [{
  type: 'dep_memory', kind: 'memory', autoInstance: true,
  create: (name) => ({
    name, type: 'dep_memory', kind: 'memory', capabilities: { search: 'none' },
    async store(ns, req) { const r = { namespace: ns, key: req.key, content: req.content, metadata: {}, created_at: '', updated_at: '' }; records.set(ns + '/' + req.key, r); return r; },
    async retrieve(ns, key) { return records.get(ns + '/' + key); },
    healthcheck: async () => 'ok', close: async () => {},
  }),
}];
`;

t.test('installed dependencies that declare themselves are discovered and instantiated', async (t) => {
  const root = dependencyRoot(DEP_ENTRY);
  const pkgs = await discoverPackages([], root, { projectRoot: root });
  const dep = pkgs.find((p) => p.name === 'sb-dep-memory');
  t.equal(dep?.source, 'dependency');
  t.notOk(
    pkgs.some((p) => p.name === 'plain-dep'),
    'a dependency without a switchboard section is not a provider package',
  );

  const app = await makeApp(t, {}, { discovery: { projectRoot: root } });
  t.ok(app.sb.providers.names('memory').includes('dep_memory'), 'auto instance of the dependency');
  t.ok(app.sb.providers.resolve('memory', { 'x-provider-memory': 'dep_memory' }), 'routable by header');
});

t.test('a broken installed dependency stops startup too', async (t) => {
  const root = dependencyRoot(`throw new Error('boom at import');`);
  const err = await startupError(() => discoverPackages([], root, { projectRoot: root }));
  t.match(err.message, "Provider package 'sb-dep-memory' is broken");
  t.match(err.message, 'boom at import');
});

t.test('two packages declaring the same provider type are refused', async (t) => {
  const copy = join(tempDir('sb-dup-'), 'probe-copy');
  cpSync(join(FIX, 'providers/probe'), copy, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8'));
  writeFileSync(join(copy, 'package.json'), JSON.stringify({ ...pkg, name: 'sb-fixture-probe-copy' }));
  const err = await startupError(() =>
    buildApp({
      config: { provider_packages: [join(FIX, 'providers/probe'), copy] },
      env: { DATA_DIR: tempDir() },
      logLevel: 'silent',
    }),
  );
  t.equal(err.code, 'SB_ERR_PROVIDER_DUPLICATE');
  t.match(err.message, "'memory/probe' is declared by both 'sb-fixture-probe' and 'sb-fixture-probe-copy'");
});

t.test('the same folder listed twice is one package', async (t) => {
  const probe = join(FIX, 'providers/probe');
  const pkgs = await discoverPackages([probe, `${probe}/`]);
  t.equal(pkgs.filter((p) => p.name === 'sb-fixture-probe').length, 1);
});
