import t from 'tap';
import type { CodeInterpreterProvider } from '../../core/primitives/code-interpreter.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { CODE_CASES, codeInterpreterSuite } from '../conformance/code-interpreter.ts';
import type { Runner } from '../conformance/kit.ts';
import { firstFactory, writeProviderPackage } from '../fixtures/provider-package.ts';
import { makeApp } from '../helpers/app.ts';

/**
 * A throwaway provider package with a toy language `echo` (stdout = the code;
 * code starting with `fail` exits 1) and in-memory files, so execute, history
 * and the multipart upload/download routes run end to end.
 */
function echoInterpreterPackage(): string {
  return writeProviderPackage({
    name: 'fixture-echo-interpreter',
    provides: ['code_interpreter'],
    source: `export const providers = [{
  type: 'echo', kind: 'code_interpreter',
  create: (name) => {
    const sessions = new Map(); let n = 0;
    return {
      name, type: 'echo', kind: 'code_interpreter', capabilities: { sessions: true, languages: ['echo'], files: true },
      createSession: async (req) => { const s = { session_id: req.session_id ?? 'gen-' + (++n), status: 'active', language: req.language, created_at: new Date().toISOString() };
        sessions.set(s.session_id, { s, history: [], files: new Map() }); return s; },
      listSessions: async () => [...sessions.values()].map((x) => x.s),
      getSession: async (id) => sessions.get(id)?.s,
      deleteSession: async (id) => sessions.delete(id),
      execute: async (id, code, language) => {
        if (code === 'crash') throw new Error('sandbox died');
        const fail = code.startsWith('fail');
        const out = { session_id: id, stdout: fail ? '' : code, stderr: fail ? 'failed on purpose' : '', exit_code: fail ? 1 : 0, result: fail ? null : code.length, error: fail ? 'failed on purpose' : null };
        sessions.get(id).history.push({ code, language, stdout: out.stdout, stderr: out.stderr, exit_code: out.exit_code, error: out.error, executed_at: new Date().toISOString() });
        return out;
      },
      history: async (id, limit) => sessions.get(id).history.slice(-limit),
      uploadFile: async (id, filename, data) => (sessions.get(id).files.set(filename, Buffer.from(data)), { filename, size: data.length }),
      downloadFile: async (id, filename) => sessions.get(id).files.get(filename),
      healthcheck: async () => 'ok', close: async () => {},
    };
  },
}];\n`,
  });
}

/** A multipart body as a browser or curl would send it. */
async function multipart(field: string, filename: string, bytes: Buffer) {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(bytes)]), filename);
  const req = new Request('http://localhost/', { method: 'POST', body: form });
  return {
    payload: Buffer.from(await req.arrayBuffer()),
    headers: { 'content-type': req.headers.get('content-type')! },
  };
}

const base = '/api/v1/code-interpreter';

t.test('noop mode: session records with data, execution and files 501', async (t) => {
  const app = await makeApp(t);
  const created = await app.inject({ method: 'POST', url: `${base}/sessions`, payload: { session_id: 'c1' } });
  t.equal(created.statusCode, 201);
  t.match(created.json(), { session_id: 'c1', status: 'active', language: 'python', created_at: String });
  const generated = await app.inject({ method: 'POST', url: `${base}/sessions` });
  t.equal(generated.statusCode, 201, 'the body is optional');
  t.equal(
    (await app.inject({ method: 'POST', url: `${base}/sessions`, payload: { session_id: 'c1' } })).statusCode,
    409,
  );

  t.equal((await app.inject({ method: 'GET', url: `${base}/sessions` })).json().sessions.length, 2);
  t.equal((await app.inject({ method: 'GET', url: `${base}/sessions/c1` })).json().session_id, 'c1');

  const exec = await app.inject({ method: 'POST', url: `${base}/sessions/c1/execute`, payload: { code: 'print(1)' } });
  t.equal(exec.statusCode, 501);
  t.match(exec.json(), {
    code: 'SB_ERR_CAPABILITY_MISSING',
    detail:
      /code interpreter provider 'noop' does not support executing python code \(capability 'languages'\).*X-Provider-Code-Interpreter/,
  });

  const history = await app.inject({ method: 'GET', url: `${base}/sessions/c1/history` });
  t.equal(history.statusCode, 200);
  t.same(history.json(), { session_id: 'c1', entries: [] }, 'nothing ran, so history is empty');

  const up = await app.inject({
    method: 'POST',
    url: `${base}/sessions/c1/files`,
    ...(await multipart('file', 'a.txt', Buffer.from('hello'))),
  });
  t.equal(up.statusCode, 501);
  t.match(up.json().detail, /does not support file upload \(capability 'files'\)/);
  const down = await app.inject({ method: 'GET', url: `${base}/sessions/c1/files/a.txt` });
  t.equal(down.statusCode, 501);
  t.match(down.json().detail, /file download/);

  t.equal((await app.inject({ method: 'DELETE', url: `${base}/sessions/c1` })).statusCode, 204);
  t.equal((await app.inject({ method: 'GET', url: `${base}/sessions/c1` })).statusCode, 404);
});

t.test('unknown sessions are 404 everywhere; bad input is 4xx', async (t) => {
  const app = await makeApp(t);
  for (const [method, path, payload] of [
    ['GET', 'nope', undefined],
    ['DELETE', 'nope', undefined],
    ['POST', 'nope/execute', { code: '1' }],
    ['GET', 'nope/history', undefined],
    ['GET', 'nope/files/a.txt', undefined],
  ] as const) {
    const res = await app.inject({ method, url: `${base}/sessions/${path}`, payload });
    t.equal(res.statusCode, 404, `${method} ${path}`);
    t.equal(res.json().code, 'SB_ERR_CODE_SESSION_NOT_FOUND');
  }
  await app.inject({ method: 'POST', url: `${base}/sessions`, payload: { session_id: 'c1' } });
  const noCode = await app.inject({
    method: 'POST',
    url: `${base}/sessions/c1/execute`,
    payload: { language: 'python' },
  });
  t.equal(noCode.statusCode, 422);
  t.match(noCode.json().detail, [{ loc: ['body', 'code'] }]);
  t.equal((await app.inject({ method: 'GET', url: `${base}/sessions/c1/history?limit=0` })).statusCode, 422);
  t.equal(
    (await app.inject({ method: 'POST', url: `${base}/sessions`, payload: { session_id: 'has/slash' } })).statusCode,
    422,
  );
});

t.test('a provider that executes: execute, history, language checks, files round trip', async (t) => {
  const app = await makeApp(t, {
    provider_packages: [echoInterpreterPackage()],
    providers: { code_interpreter: { default: 'echo', instances: { echo: { type: 'echo' } } } },
  });
  const wrongLang = await app.inject({
    method: 'POST',
    url: `${base}/sessions`,
    payload: { session_id: 'x', language: 'python' },
  });
  t.equal(wrongLang.statusCode, 400, 'a language the provider does not run is the caller’s to fix');
  t.match(wrongLang.json(), {
    code: 'SB_ERR_CODE_LANGUAGE_UNSUPPORTED',
    detail: "Language 'python' is not supported by the code interpreter provider 'echo'; supported: echo",
  });

  t.equal(
    (await app.inject({ method: 'POST', url: `${base}/sessions`, payload: { session_id: 'e1', language: 'echo' } }))
      .statusCode,
    201,
  );
  const ok = await app.inject({ method: 'POST', url: `${base}/sessions/e1/execute`, payload: { code: 'hello' } });
  t.equal(ok.statusCode, 200);
  t.same(ok.json(), { session_id: 'e1', stdout: 'hello', stderr: '', exit_code: 0, result: 5, error: null });
  const failed = await app.inject({
    method: 'POST',
    url: `${base}/sessions/e1/execute`,
    payload: { code: 'fail now', language: 'echo' },
  });
  t.equal(failed.statusCode, 200, 'code that fails is a result, not an HTTP error');
  t.match(failed.json(), { exit_code: 1, error: 'failed on purpose' });
  t.equal(
    (await app.inject({ method: 'POST', url: `${base}/sessions/e1/execute`, payload: { code: 'x', language: 'ruby' } }))
      .statusCode,
    400,
  );
  const crashed = await app.inject({ method: 'POST', url: `${base}/sessions/e1/execute`, payload: { code: 'crash' } });
  t.equal(crashed.statusCode, 502, 'a sandbox failure is a backend failure');
  t.match(crashed.json(), { code: 'SB_ERR_CODE_BACKEND_FAILED', detail: /sandbox died/ });

  const history = await app.inject({ method: 'GET', url: `${base}/sessions/e1/history` });
  t.same(
    history.json().entries.map((e: { code: string }) => e.code),
    ['hello', 'fail now'],
  );
  t.same(
    (await app.inject({ method: 'GET', url: `${base}/sessions/e1/history?limit=1` }))
      .json()
      .entries.map((e: { code: string }) => e.code),
    ['fail now'],
  );

  const bytes = Buffer.from([0, 1, 2, 254, 255]);
  const up = await app.inject({
    method: 'POST',
    url: `${base}/sessions/e1/files`,
    ...(await multipart('file', 'data.bin', bytes)),
  });
  t.equal(up.statusCode, 201);
  t.same(up.json(), { filename: 'data.bin', size: 5 });
  const down = await app.inject({ method: 'GET', url: `${base}/sessions/e1/files/data.bin` });
  t.equal(down.statusCode, 200);
  t.equal(down.headers['content-type'], 'application/octet-stream');
  t.same([...down.rawPayload], [...bytes], 'byte for byte');
  t.equal((await app.inject({ method: 'GET', url: `${base}/sessions/e1/files/other.bin` })).statusCode, 404);

  const wrongField = await app.inject({
    method: 'POST',
    url: `${base}/sessions/e1/files`,
    ...(await multipart('upload', 'a.txt', Buffer.from('a'))),
  });
  t.equal(wrongField.statusCode, 400);
  t.match(wrongField.json().detail, /no field named 'file'/);
  const notMultipart = await app.inject({ method: 'POST', url: `${base}/sessions/e1/files`, payload: { file: 'a' } });
  t.equal(notMultipart.statusCode, 400);
  t.match(notMultipart.json().detail, /multipart\/form-data/);
  const badName = await app.inject({
    method: 'POST',
    url: `${base}/sessions/e1/files`,
    ...(await multipart('file', '..', Buffer.from('a'))),
  });
  t.equal(badName.statusCode, 400);
});

t.test('the echo fixture passes the code interpreter suite', async (t) => {
  const factory = await firstFactory<CodeInterpreterProvider>(echoInterpreterPackage());
  await codeInterpreterSuite(t as unknown as Runner, {
    make: async () => factory.create('echo', {}, {} as ProviderContext),
    programs: { language: 'echo', print: { code: 'hi there', expect: 'hi there' }, fail: 'fail' },
    skip: [
      { reason: 'the fixture declares every capability, so nothing is unsupported', tests: [CODE_CASES.unsupported] },
    ],
  });
});
