/** Types of scripts/build-word-relations.mjs (plain JavaScript, imported by plugins/registry/discovery/word-relations.ts). */
export const RELATIONS_PACKAGE: string;
export const RELATION_SENSES: number;
export const RELATIONS_BUILD_COMMAND: string;
export function relationsSource(root?: string): { dir: string; version: string } | undefined;
export function wordRelationsCachePath(root?: string, senses?: number): string | undefined;
export function buildWordRelations(dir: string, senses?: number): string;
export function ensureWordRelations(opts?: { root?: string; force?: boolean }): string | undefined;
