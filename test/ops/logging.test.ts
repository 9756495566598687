import t from 'tap';
import { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { noopOnlyRoot } from '../fixtures/roots.ts';

/** Only the built-in noop package, so these tests do not depend on other providers being finished. */
const ROOT = noopOnlyRoot();

const BEARER = 'eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LWJlYXJlci12YWx1ZQ.sig-4f9a1c';
const API_KEY = 'sk-live-9c2f5e7a1b3d4e6f';
const CRED = 'cred-value-77aa88bb';
const QUERY_TOKEN = 'qtok-31337-abcdef';
const BODY_SECRET = 'body-password-5150';

/** Collects every log line the app writes. */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, stream };
}

async function routes(app: FastifyInstance) {
  // Logs its body the way a careless handler might: redaction must still hold.
  app.post(
    '/test/login',
    { schema: { body: Type.Object({ username: Type.String(), password: Type.String() }) } },
    async (request) => {
      request.log.info({ body: request.body }, 'login attempt');
      return { ok: true };
    },
  );
}

t.test('request logs are structured and never carry credentials', async (t) => {
  const { lines, stream } = capture();
  const app = await makeApp(
    t,
    {},
    { logLevel: 'info', logStream: stream, beforeSurfaces: routes, discovery: { builtinRoot: ROOT } },
  );
  await app.inject({
    url: `/healthz?token=${QUERY_TOKEN}&keep=yes`,
    headers: {
      authorization: `Bearer ${BEARER}`,
      'x-api-key': API_KEY,
      'x-cred-openai-api-key': CRED,
      'x-provider-memory': 'in_memory',
      'x-request-id': 'log-test-1',
    },
  });
  await app.inject({
    url: '/api/v1/providers',
    headers: { 'x-authorization': `Bearer ${BEARER}`, cookie: `mcp_gateway_session=${API_KEY}` },
  });
  await app.inject({ method: 'POST', url: '/test/login', payload: { username: 'ada', password: BODY_SECRET } });

  const all = lines.join('\n');
  t.ok(lines.length >= 6, `requests were logged (${lines.length} lines)`);
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const incoming = parsed.find(
    (l) => l.msg === 'incoming request' && (l.req as { url?: string })?.url?.startsWith('/healthz'),
  );
  t.ok(incoming, 'the incoming request line is there');
  const req = incoming!.req as { headers: Record<string, string>; url: string };
  t.equal(incoming!.reqId, 'log-test-1', 'request id on the line');
  t.equal(req.headers['x-provider-memory'], 'in_memory', 'ordinary headers are kept for tracing routing');
  t.equal(req.headers.authorization, '[redacted]', 'Authorization is masked, not dropped');
  t.equal(req.headers['x-api-key'], '[redacted]');
  t.equal(req.headers['x-cred-openai-api-key'], '[redacted]');
  t.match(req.url, /token=\[redacted\]&keep=yes/);
  t.ok(
    parsed.some((l) => l.msg === 'login attempt'),
    'the handler line is there',
  );

  for (const secret of [BEARER, API_KEY, CRED, QUERY_TOKEN, BODY_SECRET])
    t.notOk(all.includes(secret), `never logged: ${secret.slice(0, 8)}...`);
});
