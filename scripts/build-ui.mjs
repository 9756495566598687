/**
 * The web console's bundle: esbuild turns ui/main.tsx and everything it imports into one JS file and one CSS
 * file. Used two ways:
 *  - scripts/build.mjs (`npm start`, `npm run build`) writes them to dist/ui/ with a manifest listing every
 *    source file read and its mtime;
 *  - plugins/console/ builds them in memory, once, when dist/ui is missing or older than a source (tests,
 *    `npm run dev`), so no build step is needed during development.
 *
 * Plain JavaScript: scripts/build.mjs runs with node itself, before anything is compiled.
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const hash = (buf) => createHash('sha256').update(buf).digest('hex').slice(0, 12);

/**
 * Bundle the console found under `root`/ui. Returns the JS and CSS (with short content hashes, which make
 * the asset URLs) and `inputs`: absolute source path -> mtime, for staleness checks.
 */
export async function bundleUi(root) {
  const result = await build({
    entryPoints: [join(root, 'ui', 'main.tsx')],
    bundle: true,
    write: false,
    outdir: join(root, 'dist', 'ui'),
    entryNames: 'app',
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'));
  if (!js) throw new Error('ui bundle: esbuild produced no JavaScript');
  const inputs = {};
  for (const rel of Object.keys(result.metafile.inputs)) {
    const file = resolve(root, rel);
    if (existsSync(file)) inputs[file] = statSync(file).mtimeMs;
  }
  const jsText = Buffer.from(js.contents);
  const cssText = Buffer.from(css?.contents ?? new Uint8Array());
  return { js: jsText, css: cssText, jsHash: hash(jsText), cssHash: hash(cssText), inputs };
}

/** True when `dir` holds a bundle whose every source file is unchanged (no source newer than the build). */
export function uiUpToDate(dir) {
  const manifest = join(dir, 'manifest.json');
  if (!existsSync(manifest)) return false;
  try {
    const m = JSON.parse(readFileSync(manifest, 'utf8'));
    return (
      existsSync(join(dir, 'app.js')) &&
      Object.entries(m.inputs).every(([file, mtime]) => existsSync(file) && statSync(file).mtimeMs === mtime)
    );
  } catch {
    return false;
  }
}

/** Read a bundle written by writeUi. */
export function readUi(dir) {
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  return {
    js: readFileSync(join(dir, 'app.js')),
    css: readFileSync(join(dir, 'app.css')),
    jsHash: m.jsHash,
    cssHash: m.cssHash,
    inputs: m.inputs,
  };
}

/** Build into `dir` (app.js, app.css, manifest.json) unless it is current; swapped in whole. */
export async function writeUi(root, dir = join(root, 'dist', 'ui')) {
  if (!process.env.SB_BUILD_FORCE && uiUpToDate(dir)) return;
  const b = await bundleUi(root);
  const stage = `${dir}.build-${process.pid}`;
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  writeFileSync(join(stage, 'app.js'), b.js);
  writeFileSync(join(stage, 'app.css'), b.css);
  writeFileSync(
    join(stage, 'manifest.json'),
    JSON.stringify({ jsHash: b.jsHash, cssHash: b.cssHash, inputs: b.inputs }),
  );
  rmSync(dir, { recursive: true, force: true });
  renameSync(stage, dir);
}
