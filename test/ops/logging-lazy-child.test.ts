import t from 'tap';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { noopOnlyRoot } from '../fixtures/roots.ts';

/**
 * A request's logger is made on its first enabled line (plugins/ops/logging.ts
 * lazyChildLogger). What must not change: lines at an enabled level carry the
 * request id and redaction; lines below the level are dropped; a level change
 * on the app logger applies to requests at once.
 */

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, stream };
}

async function routes(app: FastifyInstance) {
  app.get('/test/log-levels', async (request) => {
    request.log.debug('debug line');
    request.log.info('info line');
    request.log.warn({ body: { password: 'hunter2-secret' } }, 'warn line');
    request.log.child({ step: 'inner' }).error('child line');
    return { ok: true };
  });
}

t.test('at warn: only warn and above are written, each with the request id, secrets redacted', async (t) => {
  const { lines, stream } = capture();
  const app = await makeApp(
    t,
    {},
    { logLevel: 'warn', logStream: stream, beforeSurfaces: routes, discovery: { builtinRoot: noopOnlyRoot() } },
  );
  lines.length = 0; // startup lines (the registry's generated admin password notice) are not this test's
  const res = await app.inject({ url: '/test/log-levels', headers: { 'x-request-id': 'lazy-1' } });
  t.equal(res.statusCode, 200);
  t.same(
    lines.map((l) => l.msg),
    ['warn line', 'child line'],
    'no incoming/completed request lines, no info or debug line',
  );
  for (const l of lines) t.equal(l.reqId, 'lazy-1', `'${l.msg}' carries the request id`);
  t.same(lines[0].body, { password: '[redacted]' });
  t.equal(lines[1].step, 'inner', 'a child of the request logger keeps its own bindings');
});

t.test('a level change on the app logger applies to the next request', async (t) => {
  const { lines, stream } = capture();
  const app = await makeApp(
    t,
    {},
    { logLevel: 'warn', logStream: stream, beforeSurfaces: routes, discovery: { builtinRoot: noopOnlyRoot() } },
  );
  app.log.level = 'debug';
  lines.length = 0;
  await app.inject({ url: '/test/log-levels', headers: { 'x-request-id': 'lazy-2' } });
  const msgs = lines.map((l) => l.msg);
  for (const m of ['incoming request', 'debug line', 'info line', 'warn line', 'child line', 'request completed'])
    t.ok(msgs.includes(m), `'${m}' written at debug`);
  t.ok(
    lines.every((l) => l.reqId === 'lazy-2'),
    'every line carries the request id',
  );
});
