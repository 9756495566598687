import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { StartupError } from './errors.ts';
import { PROVIDER_KINDS, type ProviderKind } from './primitives.ts';
import type { ProviderFactory } from './provider.ts';

/**
 * A provider package declares itself in its package.json:
 *   "switchboard": { "provides": ["memory"], "entry": "./index.ts" }
 * and its entry exports `providers` (or a default export with `providers`): typed factories.
 */
export interface PackageManifest {
  provides: ProviderKind[];
  entry: string;
}

export interface DiscoveredPackage {
  name: string;
  dir: string;
  source: 'builtin' | 'dependency' | 'config';
  manifest: PackageManifest;
  factories: ProviderFactory[];
}

/** The project root: where Switchboard's own package.json and providers/ live. */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Entries that the build (scripts/build.mjs) precompiled into dist/, by the
 * absolute path of their TypeScript source. `npm start` runs plain node, which
 * cannot import a .ts file; built-in providers are loaded from this map.
 */
let compiledEntries: Map<string, () => Promise<unknown>> | undefined;

export function useCompiledEntries(entries: Record<string, () => Promise<unknown>>): void {
  compiledEntries = new Map(Object.entries(entries));
}

/**
 * A precompiled entry when there is one; otherwise the file itself. Under
 * plain node a TypeScript entry that was not precompiled (a package listed in
 * the config, like examples/memory-provider) is loaded through tsx on first
 * need, so third-party TypeScript packages work with `npm start` too.
 */
async function importEntry(entry: string): Promise<Record<string, unknown>> {
  const compiled = compiledEntries?.get(entry);
  if (compiled) return (await compiled()) as Record<string, unknown>;
  const url = pathToFileURL(entry).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
    // Node keeps the failed import of this URL, so the retry goes through tsx's scoped loader.
    const { tsImport } = await import('tsx/esm/api');
    return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
}

const broken = (pkg: string, reason: string, cause?: unknown) =>
  new StartupError('SB_ERR_PROVIDER_PACKAGE_INVALID', `Provider package '${pkg}' is broken: ${reason}`, cause);

function readJson(file: string, pkg: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw broken(pkg, `cannot read ${file}: ${(err as Error).message}`, err);
  }
}

function parseManifest(pkgJson: Record<string, unknown>, pkg: string): PackageManifest {
  const m = pkgJson.switchboard as Record<string, unknown> | undefined;
  if (!m || typeof m !== 'object') throw broken(pkg, 'package.json has no "switchboard" section');
  const provides = m.provides;
  if (!Array.isArray(provides) || provides.length === 0)
    throw broken(pkg, '"switchboard.provides" must be a non-empty list of primitives');
  for (const p of provides) {
    if (!PROVIDER_KINDS.includes(p as ProviderKind))
      throw broken(
        pkg,
        `"switchboard.provides" names unknown primitive '${String(p)}' (known: ${PROVIDER_KINDS.join(', ')})`,
      );
  }
  if (typeof m.entry !== 'string' || !m.entry)
    throw broken(pkg, '"switchboard.entry" must name the module that exports the providers');
  return { provides: provides as ProviderKind[], entry: m.entry };
}

async function loadPackage(dir: string, source: DiscoveredPackage['source']): Promise<DiscoveredPackage> {
  const pkgJson = readJson(join(dir, 'package.json'), dir);
  const name = typeof pkgJson.name === 'string' ? pkgJson.name : dir;
  const manifest = parseManifest(pkgJson, name);
  const entry = resolve(dir, manifest.entry);
  if (!existsSync(entry)) throw broken(name, `entry ${manifest.entry} does not exist`);
  let mod: Record<string, unknown>;
  try {
    mod = await importEntry(entry);
  } catch (err) {
    throw broken(name, `entry ${manifest.entry} failed to load: ${(err as Error).message}`, err);
  }
  const exported = (mod.providers ?? (mod.default as Record<string, unknown> | undefined)?.providers) as unknown;
  if (!Array.isArray(exported) || exported.length === 0)
    throw broken(name, `entry ${manifest.entry} exports no "providers" list`);
  const factories: ProviderFactory[] = [];
  for (const f of exported as ProviderFactory[]) {
    if (!f || typeof f.type !== 'string' || typeof f.create !== 'function')
      throw broken(name, 'every provider needs a string "type" and a "create" function');
    if (!manifest.provides.includes(f.kind))
      throw broken(
        name,
        `provider '${f.type}' serves '${String(f.kind)}', which package.json does not declare in "switchboard.provides"`,
      );
    factories.push(f);
  }
  return { name, dir, source, manifest, factories };
}

function builtinDirs(projectRoot: string): string[] {
  const root = join(projectRoot, 'providers');
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => (d.isDirectory() || d.isSymbolicLink()) && existsSync(join(root, d.name, 'package.json')))
    .map((d) => join(root, d.name))
    .sort();
}

/** Installed dependencies of the project whose package.json has a "switchboard" section. */
function dependencyDirs(projectRoot: string): string[] {
  const rootFile = join(projectRoot, 'package.json');
  if (!existsSync(rootFile)) return [];
  let rootPkg: Record<string, Record<string, string> | undefined>;
  try {
    rootPkg = JSON.parse(readFileSync(rootFile, 'utf8')) as typeof rootPkg;
  } catch (err) {
    throw new StartupError(
      'SB_ERR_PROVIDER_PACKAGE_INVALID',
      `Cannot read ${rootFile} to find provider dependencies: ${(err as Error).message}`,
      err,
    );
  }
  const names = Object.keys({ ...rootPkg.dependencies, ...rootPkg.optionalDependencies });
  const dirs: string[] = [];
  for (const n of names) {
    const dir = join(projectRoot, 'node_modules', n);
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    try {
      if ((JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>).switchboard) dirs.push(dir);
    } catch {
      /* a dependency with an unreadable package.json is not ours to judge */
    }
  }
  return dirs;
}

export interface DiscoveryRoots {
  /** Where `providers/` (built-in packages) is read; Switchboard's own folder by default. */
  builtinRoot?: string;
  /** Whose package.json dependencies and node_modules/ are searched; Switchboard's own folder by default. */
  projectRoot?: string;
}

/**
 * Built-in packages (providers/), then installed dependencies that declare
 * themselves, then the config's `provider_packages`. The first broken package
 * stops discovery with a StartupError naming it.
 */
export async function discoverPackages(
  extraPaths: string[] = [],
  configDir = process.cwd(),
  roots: DiscoveryRoots = {},
): Promise<DiscoveredPackage[]> {
  const found: DiscoveredPackage[] = [];
  const seen = new Set<string>();
  const add = async (dir: string, source: DiscoveredPackage['source']) => {
    const real = resolve(dir);
    if (seen.has(real)) return;
    seen.add(real);
    if (!existsSync(join(real, 'package.json'))) throw broken(dir, 'no package.json in that folder');
    found.push(await loadPackage(real, source));
  };
  for (const d of builtinDirs(roots.builtinRoot ?? PROJECT_ROOT)) await add(d, 'builtin');
  for (const d of dependencyDirs(roots.projectRoot ?? PROJECT_ROOT)) await add(d, 'dependency');
  for (const p of extraPaths) await add(resolve(configDir, p), 'config');
  return found;
}
