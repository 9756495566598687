import { gzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { bundleUi, readUi, uiUpToDate } from '../../scripts/build-ui.mjs';
import { SwitchboardError } from '../../core/errors.ts';

/** The project root (plugins/console/ is two levels down; scripts/build.mjs keeps this path for dist/). */
export const ROOT = resolve(import.meta.dirname, '..', '..');

export interface Asset {
  body: Buffer;
  gzip: Buffer;
  type: string;
}

export interface ConsoleBundle {
  /** `app-<hash>.js` / `app-<hash>.css` -> the file. */
  files: Map<string, Asset>;
  js: string;
  css: string;
  /** Where it came from: dist/ui (npm start) or an in-memory build (tests, npm run dev). */
  source: 'dist' | 'memory';
}

/**
 * The console's JS and CSS: from dist/ui when it was built from the current sources, else bundled here in
 * memory. Loaded once, on the first request that needs it (a server that nobody browses never pays for
 * esbuild), and kept: gzip is done once too.
 */
export class ConsoleAssets {
  private loading?: Promise<ConsoleBundle>;

  constructor(
    private readonly root = ROOT,
    private readonly distDir = join(ROOT, 'dist', 'ui'),
  ) {}

  get(): Promise<ConsoleBundle> {
    this.loading ??= this.load().catch((err: Error) => {
      // A failed build is not cached: the next request tries again (after the source is fixed).
      this.loading = undefined;
      throw new SwitchboardError(500, 'SB_ERR_CONSOLE_BUILD', `The web console could not be bundled: ${err.message}`, {
        cause: err,
      });
    });
    return this.loading;
  }

  private async load(): Promise<ConsoleBundle> {
    const fromDist = uiUpToDate(this.distDir);
    const b = fromDist ? readUi(this.distDir) : await bundleUi(this.root);
    const js = `app-${b.jsHash}.js`;
    const css = `app-${b.cssHash}.css`;
    const files = new Map<string, Asset>([
      [js, { body: b.js, gzip: gzipSync(b.js, { level: 9 }), type: 'text/javascript; charset=utf-8' }],
      [css, { body: b.css, gzip: gzipSync(b.css, { level: 9 }), type: 'text/css; charset=utf-8' }],
    ]);
    return { files, js, css, source: fromDist ? 'dist' : 'memory' };
  }
}

/** The one HTML page of the console; everything else is the bundle. No inline script or style (CSP). */
export function indexHtml(b: ConsoleBundle): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard</title>
<link rel="stylesheet" href="/ui/assets/${b.css}">
<script type="module" src="/ui/assets/${b.js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Switchboard console needs JavaScript. The API and its reference are at <a href="/docs">/docs</a>.</noscript>
</body>
</html>
`;
}

/**
 * Same-origin only, no inline script, no inline style attribute (styles set through the CSSOM are allowed),
 * nothing framed. connect-src 'self' covers the health WebSocket (same host).
 */
export const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');
