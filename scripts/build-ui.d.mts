/** Types of scripts/build-ui.mjs (plain JavaScript, imported by plugins/console). */
export interface UiBundle {
  js: Buffer;
  css: Buffer;
  jsHash: string;
  cssHash: string;
  inputs: Record<string, number>;
}
export function bundleUi(root: string): Promise<UiBundle>;
export function uiUpToDate(dir: string): boolean;
export function readUi(dir: string): UiBundle;
export function writeUi(root: string, dir?: string): Promise<void>;
