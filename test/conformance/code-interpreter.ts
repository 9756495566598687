import type { CodeInterpreterProvider } from '../../core/primitives/code-interpreter.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

export const CODE_CASES = {
  lifecycle: 'session lifecycle: create, get, list, delete',
  generatedId: 'a session id is generated when absent',
  execute: 'execute returns stdout and exit code 0',
  executeError: 'failing code reports stderr, a non-zero exit code and an error',
  history: 'history lists executions oldest first, limited',
  files: 'upload then download a file byte for byte',
  unsupported: 'capabilities declared false reject with 501',
} as const;

export interface CodeSuiteOptions extends SuiteOptions<CodeInterpreterProvider> {
  /**
   * Programs in a language the provider runs: one printing `expect` to stdout,
   * one that fails. Required unless the execute cases are skipped.
   */
  programs?: { language: string; print: { code: string; expect: string }; fail: string };
}

/** The code interpreter suite: every provider runs it with its own runner and named skips. */
export async function codeInterpreterSuite(t: Runner, opts: CodeSuiteOptions): Promise<void> {
  const run = caseRunner(t, opts);
  const language = opts.programs?.language ?? 'python';
  const needPrograms = (t: Runner) => {
    if (!opts.programs) t.ok(false, 'execution cases need `programs`: pass them or skip the case by name');
    return opts.programs;
  };

  await run(CODE_CASES.lifecycle, async (t, p) => {
    const s = await p.createSession({ session_id: 'conf-1', language });
    t.match(s, { session_id: 'conf-1', status: 'active', language });
    t.ok(!Number.isNaN(Date.parse(s.created_at)), 'created_at is a timestamp');
    t.same(await p.getSession('conf-1'), s);
    t.same(
      (await p.listSessions()).map((x) => x.session_id),
      ['conf-1'],
    );
    t.equal(await p.getSession('nope'), undefined);
    t.equal(await p.deleteSession('conf-1'), true);
    t.equal(await p.getSession('conf-1'), undefined);
    t.equal(await p.deleteSession('conf-1'), false, 'deleting twice reports false');
  });

  await run(CODE_CASES.generatedId, async (t, p) => {
    const a = await p.createSession({ language });
    const b = await p.createSession({ language });
    t.ok(a.session_id.length > 0);
    t.not(a.session_id, b.session_id);
  });

  await run(CODE_CASES.execute, async (t, p) => {
    const prog = needPrograms(t);
    if (!prog) return;
    const s = await p.createSession({ language: prog.language });
    const out = await p.execute(s.session_id, prog.print.code, prog.language);
    t.match(out, { session_id: s.session_id, exit_code: 0, error: null });
    t.match(out.stdout, prog.print.expect);
  });

  await run(CODE_CASES.executeError, async (t, p) => {
    const prog = needPrograms(t);
    if (!prog) return;
    const s = await p.createSession({ language: prog.language });
    const out = await p.execute(s.session_id, prog.fail, prog.language);
    t.not(out.exit_code, 0);
    t.ok(out.error, 'error is set');
  });

  await run(CODE_CASES.history, async (t, p) => {
    const prog = needPrograms(t);
    if (!prog) return;
    const s = await p.createSession({ language: prog.language });
    t.same(await p.history(s.session_id, 10), [], 'empty before any execution');
    await p.execute(s.session_id, prog.print.code, prog.language);
    await p.execute(s.session_id, prog.fail, prog.language);
    const all = await p.history(s.session_id, 10);
    t.same(
      all.map((e) => e.code),
      [prog.print.code, prog.fail],
    );
    t.equal(all[0].exit_code, 0);
    t.same((await p.history(s.session_id, 1)).length, 1, 'limit applies');
  });

  await run(CODE_CASES.files, async (t, p) => {
    const s = await p.createSession({ language });
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
    t.same(await p.uploadFile(s.session_id, 'data.bin', bytes), { filename: 'data.bin', size: bytes.length });
    t.same(await p.downloadFile(s.session_id, 'data.bin'), bytes);
    t.equal(await p.downloadFile(s.session_id, 'missing.txt'), undefined);
  });

  await run(CODE_CASES.unsupported, async (t, p) => {
    const s = await p.createSession({ language });
    let checked = 0;
    if (p.capabilities.languages.length === 0) {
      checked++;
      await t.rejects(p.execute(s.session_id, '1', language), { statusCode: 501 }, 'no languages, so execute is a 501');
    }
    if (p.capabilities.files !== true) {
      checked += 2;
      await t.rejects(
        p.uploadFile(s.session_id, 'a.txt', Buffer.from('a')),
        { statusCode: 501 },
        'files is false, so upload is a 501',
      );
      await t.rejects(
        p.downloadFile(s.session_id, 'a.txt'),
        { statusCode: 501 },
        'files is false, so download is a 501',
      );
    }
    t.comment(`${checked} unsupported operations checked`);
  });
}
