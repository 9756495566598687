import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { CodeInterpreterProvider } from '../../core/primitives/code-interpreter.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { openStore } from '../../core/store.ts';
import { buildApp } from '../../plugins/app.ts';
import { localCodeInterpreter } from '../../providers/local-sandbox/index.ts';
import { findBwrap } from '../../providers/local-sandbox/options.ts';
import { agentApp } from '../agents/helpers.ts';
import { codeInterpreterSuite } from '../conformance/code-interpreter.ts';
import type { Runner } from '../conformance/kit.ts';
import { ALICE_BOB_ROOT, apiKeyUsers, keyHeader } from '../fixtures/api-key-users.ts';
import { makeApp, tempDir } from '../helpers/app.ts';

t.setTimeout(900_000);
if (!findBwrap()) {
  t.fail('no bubblewrap: test/setup/install-deps.sh installs Debian bubblewrap');
  process.exit(1);
}

const silent = { info() {}, warn() {}, error() {}, debug() {} };
const make = async (options: Record<string, unknown> = {}, dataDir = tempDir('sb-ci-')) =>
  localCodeInterpreter.create('local', options, {
    logger: silent,
    dataDir,
  } as unknown as ProviderContext) as Promise<CodeInterpreterProvider>;

t.test('local passes the code interpreter conformance suite', async (t) => {
  await codeInterpreterSuite(t as unknown as Runner, {
    make: () => make(),
    programs: {
      language: 'python',
      print: { code: 'print("conformance")', expect: 'conformance' },
      fail: 'raise ValueError("nope")',
    },
  });
  await codeInterpreterSuite(t as unknown as Runner, {
    make: () => make(),
    programs: {
      language: 'javascript',
      print: { code: 'console.log("conformance")', expect: 'conformance' },
      fail: 'throw new Error("nope")',
    },
  });
});

t.test('both languages run, keep state between calls, and see session files', async (t) => {
  const p = await make();
  t.teardown(() => p.close());
  const s = await p.createSession({ language: 'python' });
  t.match(await p.execute(s.session_id, 'print(1+1)', 'python'), {
    stdout: '2\n',
    exit_code: 0,
    error: null,
    truncated: false,
  });
  const js = await p.execute(s.session_id, 'console.log(1+1)', 'javascript');
  t.match(js, { stdout: '2\n', exit_code: 0 }, `javascript runs (stderr: ${js.stderr.slice(0, 500)})`);
  await p.execute(s.session_id, 'answer = 41', 'python');
  t.match(
    await p.execute(s.session_id, 'answer + 1', 'python'),
    { result: '42' },
    'a Python variable survives to the next call',
  );
  await p.execute(s.session_id, 'let counter = 10', 'javascript');
  t.match(
    await p.execute(s.session_id, 'counter * 2', 'javascript'),
    { result: '20' },
    'a JavaScript variable survives too',
  );

  const wrote = await p.execute(s.session_id, 'open("report.txt", "w").write("made by code")', 'python');
  t.same(wrote.files_created, ['report.txt'], 'the new file is listed');
  t.equal(typeof wrote.duration_ms, 'number');
  t.equal((await p.downloadFile(s.session_id, 'report.txt'))?.toString(), 'made by code', 'and downloadable');
  await p.uploadFile(s.session_id, 'input.csv', Buffer.from('a,b\n1,2\n'));
  t.match(
    await p.execute(s.session_id, 'open("input.csv").read().splitlines()[1]', 'python'),
    { result: "'1,2'" },
    'an uploaded file is readable by code',
  );

  await p.execute(s.session_id, 'import os; os.symlink("/etc/passwd", "link.txt")', 'python');
  t.equal(
    await p.downloadFile(s.session_id, 'link.txt'),
    undefined,
    'a symlink made by code is never followed on download',
  );
  t.same(
    (await p.history(s.session_id, 2)).map((h) => h.code),
    ['print(1+1)', 'console.log(1+1)'],
    'history records each execution',
  );
});

t.test('limits and isolation', async (t) => {
  const dataDir = tempDir('sb-ci-');
  writeFileSync(join(dataDir, 'secret_key'), 'top secret', { mode: 0o600 });
  const p = await make({ max_processes: 32 }, dataDir);
  t.teardown(() => p.close());
  const s = await p.createSession({ language: 'python' });
  const id = s.session_id;

  const spin = await p.execute(id, 'while True: pass', 'python', { timeoutSeconds: 2 });
  t.match(spin, { exit_code: 124, error: /timed out after 2 s/ }, 'an endless loop is killed at the timeout');
  t.match(
    await p.execute(id, 'print("still here")', 'python'),
    { stdout: 'still here\n', exit_code: 0 },
    'and the session works afterwards',
  );

  t.match(
    await p.execute(id, 'x = bytearray(2 * 1024**3)', 'python'),
    { exit_code: 1, error: /MemoryError/ },
    'allocating 2 GiB fails under the memory limit',
  );

  const loud = await p.execute(id, 'import sys; sys.stdout.write("x" * (10 * 1024 * 1024))', 'python');
  t.equal(loud.truncated, true, '10 MiB of output is truncated');
  t.equal(loud.stdout.length, 1024 * 1024, 'to the 1 MiB cap');

  const net = await p.execute(
    id,
    'import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(("127.0.0.1", 6379))',
    'python',
  );
  t.not(net.exit_code, 0, 'a socket to 127.0.0.1 fails (no network)');
  t.match(net.error, /Connection refused|unreachable|Errno/);

  for (const path of [join(dataDir, 'secret_key'), '/etc/shadow', '/work/../secret_key']) {
    const read = await p.execute(id, `open(${JSON.stringify(path)}).read()`, 'python');
    t.match(read, { exit_code: 1, error: /FileNotFoundError|PermissionError/ }, `reading ${path} fails`);
  }

  const bomb = await p.execute(id, 'import os\nwhile True:\n    os.fork()', 'python', { timeoutSeconds: 5 });
  t.not(bomb.exit_code, 0, 'the fork bomb does not finish normally');
  // Sandboxes run as host uids 200000 and up (one per session, providers/local-sandbox/index.ts).
  const uidProcs = () =>
    String(
      execFileSync('ps', ['-eo', 'uid='], { encoding: 'utf8' })
        .split('\n')
        .map(Number)
        .filter((u) => u >= 200_000 && u < 260_000).length,
    );
  t.match(
    await p.execute(id, 'print("after the bomb")', 'python', { timeoutSeconds: 20 }),
    { stdout: /after the bomb/ },
    'the session still works after the bomb',
  );
  t.ok(Number(uidProcs()) <= 40, `sandbox processes stay under the limit (${uidProcs()})`);
  await p.deleteSession(id);
  const gone = Date.now() + 20_000;
  while (Number(uidProcs()) > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
  t.equal(uidProcs(), '0', 'deleting the session leaves no sandbox process');
});

t.test('HTTP: owners, bad input', async (t) => {
  const config = {
    ...apiKeyUsers(ALICE_BOB_ROOT),
    providers: {
      ...apiKeyUsers(ALICE_BOB_ROOT).providers,
      code_interpreter: { instances: { local: { type: 'local' } } },
    },
  };
  const app = await makeApp(t, config);
  const alice = keyHeader('alice');
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/code-interpreter/sessions',
    headers: alice,
    payload: { session_id: null, language: 'python' },
  });
  t.equal(created.statusCode, 201, created.body);
  const id = created.json().session_id;
  const run = (headers: Record<string, string>, payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `/api/v1/code-interpreter/sessions/${id}/execute`, headers, payload });
  t.match((await run(alice, { code: 'print(6 * 7)' })).json(), { stdout: '42\n' });
  t.equal(
    (await run(keyHeader('bob'), { code: 'print(1)' })).statusCode,
    403,
    "another owner cannot execute in alice's session",
  );
  const lang = await run(alice, { code: 'x', language: 'cobol' });
  t.equal(lang.statusCode, 400);
  t.match(lang.json().detail, /supported: python, javascript/);
  t.equal((await run(alice, { code: '' })).statusCode, 422, 'empty code is a 422');
  const boundary = 'sbtest';
  const upload = await app.inject({
    method: 'POST',
    url: `/api/v1/code-interpreter/sessions/${id}/files`,
    headers: { ...alice, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="../escape.txt"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--${boundary}--\r\n`,
  });
  t.equal(upload.statusCode, 400, 'a file name with ../ is a 400');
  t.match(upload.json().detail, /no folders/);
});

t.test('local is the default where bubblewrap is found', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: tempDir() };
  delete env.SWITCHBOARD_CONFIG;
  delete env.REDIS_URL;
  const app = await buildApp({ env, config: {}, store: await openStore({ backend: 'memory' }), logLevel: 'silent' });
  t.teardown(() => app.close());
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/providers' })).json().code_interpreter.default, 'local');
  await t.rejects(
    Promise.resolve().then(() =>
      localCodeInterpreter.create('x', { bwrap_path: '/nonexistent/bwrap' }, {
        logger: silent,
        dataDir: tempDir(),
      } as unknown as ProviderContext),
    ),
    /allow_unsandboxed/,
    'without bubblewrap the provider refuses to start unless allow_unsandboxed is set',
  );
  const loose = await localCodeInterpreter.create('x', { bwrap_path: '/nonexistent/bwrap', allow_unsandboxed: true }, {
    logger: silent,
    dataDir: tempDir(),
  } as unknown as ProviderContext);
  t.equal(await loose.healthcheck(), 'reachable', 'and then its healthcheck is not plain ok');
  await loose.close();
});

t.test('an agent computes an answer with execute_code', async (t) => {
  const app = await agentApp(t, {
    script: [
      {
        match: 'compute',
        turns: [
          { tool_calls: [{ name: 'execute_code', input: { code: 'print(sum(range(1, 101)))' } }] },
          { content: 'Result: {{tool_result}}' },
        ],
      },
      {
        match: 'files',
        turns: [
          { tool_calls: [{ name: 'upload_file', input: { filename: 'n.txt', content: '21' } }] },
          {
            tool_calls: [
              {
                name: 'execute_code',
                input: { code: 'open("out.txt", "w").write(str(int(open("n.txt").read()) * 2))' },
              },
            ],
          },
          { tool_calls: [{ name: 'read_file', input: { filename: 'out.txt' } }] },
          { content: 'File says {{tool_result}}' },
        ],
      },
    ],
    config: { providers: { code_interpreter: { instances: { local: { type: 'local' } } } } },
  });
  await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: {
      name: 'calc',
      model: 'm',
      primitives: { code_interpreter: { enabled: true } },
      hooks: { auto_memory: false, auto_trace: false },
    },
  });
  const chat = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/calc/chat',
    payload: { message: 'compute the sum' },
  });
  t.equal(chat.statusCode, 200, chat.body);
  t.match(chat.json().response, /5050/, 'the sum came from the sandbox');
  t.same(chat.json().tools_called, ['execute_code']);
  const files = await app.inject({
    method: 'POST',
    url: '/api/v1/agents/calc/chat',
    payload: { message: 'files please' },
  });
  t.equal(files.json().response, 'File says 42', 'upload_file, execute_code and read_file work on one session');
});
