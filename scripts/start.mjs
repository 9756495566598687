#!/usr/bin/env node
/**
 * `npm start`: build dist/ when a source changed, then run the server in this
 * same process. One process on purpose: `npm start` used to be `build && node
 * dist/switchboard.js` under a shell, and a SIGTERM to it (npm forwards it to
 * the shell) left the server running as an orphan. Now the script is `exec
 * node scripts/start.mjs`: the shell npm runs it with becomes this process, so
 * npm's forwarded signal reaches the server itself, whose handlers close it.
 *
 * Plain JavaScript: it runs with node itself, before anything is compiled.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildDist } from './build.mjs';

const dist = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'dist');
if (!(await buildDist(dist))) process.exit(1);
await import(pathToFileURL(join(dist, 'switchboard.js')).href);
