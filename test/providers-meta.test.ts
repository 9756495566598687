import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { discoverPackages, PROJECT_ROOT } from '../core/discovery.ts';
import { PRIMITIVES, PROVIDER_KINDS } from '../core/primitives.ts';
import type { ProviderBase, ProviderContext } from '../core/provider.ts';
import { openStore } from '../core/store.ts';
import { makeApp, tempDir } from './helpers/app.ts';

/**
 * Every folder in providers/ is a well-formed provider package, is discovered
 * at startup, and each factory that is instantiated without configuration
 * (autoInstance) builds, answers its healthcheck and closes cleanly.
 */
const ROOT = join(PROJECT_ROOT, 'providers');
const folders = readdirSync(ROOT, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

t.ok(folders.length > 0, 'providers/ has packages');

const discovered = await discoverPackages();

for (const folder of folders) {
  t.test(`providers/${folder}`, async (t) => {
    const dir = join(ROOT, folder);
    const pkgFile = join(dir, 'package.json');
    t.ok(existsSync(pkgFile), 'has a package.json');
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
    t.type(pkg.name, 'string', 'has a name');
    t.equal(pkg.type, 'module', 'is ESM');
    t.ok(Array.isArray(pkg.switchboard?.provides) && pkg.switchboard.provides.length > 0, 'declares what it provides');
    for (const p of pkg.switchboard?.provides ?? []) t.ok(PROVIDER_KINDS.includes(p), `'${p}' is a known primitive`);
    t.ok(existsSync(resolve(dir, pkg.switchboard?.entry ?? '')), 'its entry exists');

    const found = discovered.find((d) => d.dir === dir);
    t.ok(found, 'is discovered at startup');
    if (!found) return;
    t.equal(found.source, 'builtin');
    t.equal(found.name, pkg.name);
    t.ok(found.factories.length > 0, 'exports factories');
    const types = found.factories.map((f) => `${f.kind}/${f.type}`);
    t.equal(new Set(types).size, types.length, 'factory types are unique');
    for (const kind of pkg.switchboard.provides)
      t.ok(
        found.factories.some((f) => f.kind === kind),
        `has a factory for '${kind}' it declares`,
      );

    for (const f of found.factories.filter((f) => f.autoInstance)) {
      await t.test(`${f.kind}/${f.type} builds with no options, answers healthcheck, closes`, async (t) => {
        const store = await openStore({ backend: 'memory' });
        t.teardown(() => store.close());
        const made: ProviderBase[] = [];
        const ctx: ProviderContext = {
          store,
          logger: pino({ level: 'silent' }),
          dataDir: tempDir('sb-meta-'),
          lookup: (kind, name) => made.find((p) => p.kind === kind && (name === undefined || p.name === name)),
        };
        const p = await f.create(f.type, {}, ctx);
        made.push(p);
        t.equal(p.name, f.type, 'named as asked');
        t.equal(p.kind, f.kind);
        t.equal(p.type, f.type);
        t.type(p.capabilities, 'object', 'declares capabilities');
        t.match(await p.healthcheck(), /^(ok|reachable|down)$/, 'healthcheck is ok, reachable or down');
        await t.resolves(p.close(), 'closes cleanly');
      });
    }
  });
}

t.test('noop mode: with no config every primitive has a default provider', async (t) => {
  const app = await makeApp(t);
  const listing = app.sb.providers.listing();
  for (const p of PRIMITIVES) {
    t.ok(listing[p].default, `${p} has a default (${listing[p].default ?? 'none'})`);
    t.ok(listing[p].available.includes(listing[p].default ?? ''), `${p}: the default is available`);
  }
  t.equal(listing.memory.default, 'in_memory', 'memory defaults to the in-process store');
  t.ok(app.sb.providers.get('auth'), 'an auth backend is there');
});
