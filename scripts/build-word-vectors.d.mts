/** Types of scripts/build-word-vectors.mjs (plain JavaScript, imported by plugins/registry/discovery/word-vectors.ts). */
export const PACKAGE: string;
export const DEFAULT_COUNT: number;
export const BUILD_COMMAND: string;
export function packageSource(root?: string): { file: string; version: string } | undefined;
export function wordVectorsCachePath(root?: string, count?: number): string | undefined;
export function buildWordVectors(src: string, want?: number): Promise<Buffer>;
export function ensureWordVectors(opts?: {
  root?: string;
  count?: number;
  out?: string;
  force?: boolean;
}): Promise<string | undefined>;
