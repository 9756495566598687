import t from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/app.ts';
import { freePort } from '../fixtures/redis-server.ts';

/**
 * `npm start` (scripts/start.mjs) builds with scripts/build.mjs and runs dist/switchboard.js: plain
 * node on an esbuild bundle. This builds a private copy (so it never races a
 * running `npm start`) and checks what only the bundle can get wrong: built-in
 * providers found through the precompiled map, a third-party TypeScript
 * package from the config loaded through tsx, paths computed from
 * import.meta (scopes/, the project root), and the full route table.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUT = join(ROOT, `.dist-test-${process.pid}`);
const EXAMPLE = join(ROOT, 'examples/memory-provider');

t.teardown(() => rmSync(OUT, { recursive: true, force: true }));

t.test('the build writes an entry and chunks, and leaves no staging folder', async (t) => {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--outdir', OUT], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  t.ok(existsSync(join(OUT, 'switchboard.js')));
  t.ok(
    readdirSync(join(OUT, 'chunks')).some((f) => f.startsWith('keyv-')),
    'each built-in provider package is its own chunk',
  );
  t.notOk(
    readdirSync(ROOT).some((f) => f.startsWith(`.dist-test-${process.pid}.build-`)),
    'the staging folder was renamed into place',
  );
});

t.test('the bundle serves both surfaces with built-in and config-listed TypeScript providers', async (t) => {
  const dir = tempDir('sb-build-start-');
  const conf = join(dir, 'config.json');
  writeFileSync(conf, JSON.stringify({ provider_packages: [EXAMPLE] }));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    SWITCHBOARD_CONFIG: conf,
  };
  delete env.REDIS_URL;
  // Plain node, no tsx loader: exactly what `npm start` runs after the build.
  const child = spawn(process.execPath, [join(OUT, 'switchboard.js')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${port}`;
  let up = false;
  for (let i = 0; i < 600 && !up; i++) {
    if (child.exitCode !== null) break;
    try {
      up = (await fetch(`${base}/healthz`)).ok;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  t.ok(up, `the bundle answered /healthz${up ? '' : `; stderr: ${stderr}`}`);
  if (!up) return;

  const providers = (await (await fetch(`${base}/api/v1/providers`)).json()) as Record<
    string,
    { default: string; available: string[] }
  >;
  t.same(
    providers.memory.available.sort(),
    ['in_memory', 'json_file', 'keyv'],
    'built-in memory providers plus the example package from the config',
  );
  t.ok(providers.llm.available.includes('noop'));

  for (const provider of ['in_memory', 'keyv', 'json_file']) {
    const put = await fetch(`${base}/api/v1/memory/build-test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-memory': provider },
      body: JSON.stringify({ key: 'k', content: `stored through ${provider}` }),
    });
    t.equal(put.status, 201, `${provider}: store`);
    const got = await fetch(`${base}/api/v1/memory/build-test/k`, { headers: { 'x-provider-memory': provider } });
    t.equal(((await got.json()) as { content: string }).content, `stored through ${provider}`, `${provider}: retrieve`);
  }

  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  t.ok(Object.keys(doc.paths).length > 100, `/openapi.json lists every route (${Object.keys(doc.paths).length} paths)`);
  t.ok(doc.paths['/api/v1/memory/{namespace}/{key}'], 'platform routes are documented');
  t.equal((await fetch(`${base}/docs/`)).status, 200, '/docs is served');
  // The registry seeds its scope documents from scopes/, found through import.meta.dirname: in the bundle
  // that must still point into the checkout (a missing folder would silently seed nothing).
  const password = readFileSync(join(dir, 'admin_password'), 'utf8').trim();
  const scopes = await fetch(`${base}/api/scopes`, {
    headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` },
  });
  t.equal(scopes.status, 200);
  const ids = ((await scopes.json()) as { scopes: Array<{ _id: string }> }).scopes.map((s) => s._id);
  t.ok(ids.includes('mcp-registry-admin'), `the scope files were seeded (${ids.join(', ')})`);

  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await gone;
  t.equal(child.exitCode, 0, 'SIGTERM shuts down cleanly');
});

t.test('an unchanged tree is not rebuilt; a touched source file is', async (t) => {
  const build = () =>
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--outdir', OUT], {
      cwd: ROOT,
      env: { ...process.env, SB_BUILD_VERBOSE: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--outdir', OUT], { cwd: ROOT, stdio: 'ignore' });
  const stamp = JSON.parse(readFileSync(join(OUT, 'inputs.json'), 'utf8')) as { inputs: Record<string, number> };
  t.ok(stamp.inputs[join(ROOT, 'core/errors.ts')], 'the stamp records the sources the bundle was built from');
  const before = readFileSync(join(OUT, 'switchboard.js'), 'utf8');

  // SB_BUILD_VERBOSE makes the script say which way it went (on stderr, which execFileSync
  // does not return), so the evidence is the stamp file: it is rewritten only by a build.
  build();
  t.same(JSON.parse(readFileSync(join(OUT, 'inputs.json'), 'utf8')), stamp, 'no rebuild: the stamp is untouched');

  // A source file with a new mtime (its content unchanged) forces a rebuild.
  const file = join(ROOT, 'core/errors.ts');
  const { utimesSync, statSync } = await import('node:fs');
  const old = statSync(file);
  utimesSync(file, old.atime, new Date(old.mtimeMs + 1000));
  t.teardown(() => utimesSync(file, old.atime, old.mtime));
  build();
  const after = JSON.parse(readFileSync(join(OUT, 'inputs.json'), 'utf8')) as { inputs: Record<string, number> };
  t.not(after.inputs[file], stamp.inputs[file], 'rebuilt: the stamp carries the new mtime');
  t.equal(readFileSync(join(OUT, 'switchboard.js'), 'utf8'), before, 'and the same sources give the same entry');
});
