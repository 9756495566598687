import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { badRequest, tooManyRequests } from '../../core/errors.ts';
import type {
  CodeInterpreterCapabilities,
  CodeInterpreterProvider,
  CodeSession,
  ExecuteResult,
  HistoryEntry,
} from '../../core/primitives/code-interpreter.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { findBwrap, parseOptions, type SandboxOptions } from './options.ts';
import { prepareInstanceDirs } from './instance-dirs.ts';
import { Repl } from './repl.ts';
import { sandboxed, unsandboxed, type Language } from './sandbox-command.ts';
import { SessionFiles } from './session-files.ts';

interface Session {
  record: CodeSession;
  files: SessionFiles;
  repls: Map<Language, Repl>;
  history: HistoryEntry[];
  lastUsed: number;
  ids?: { uid: number; gid: number };
}

const HISTORY_LIMIT = 1000;
// Host uids for sessions when Switchboard runs as root: one per session, so RLIMIT_NPROC is per session and the
// sandbox owns nothing of the host's (files of root, DATA_DIR's secrets) even through a mapped uid.
const UID_BASE = 200_000;
const UID_SPAN = 60_000;

function languagesOf(o: SandboxOptions): Language[] {
  const out: Language[] = [];
  if (o.pythonPath) out.push('python');
  if (o.nodePath) out.push('javascript');
  return out;
}

/**
 * Runs Python and JavaScript on this machine, one warm interpreter per session and language, each inside
 * bubblewrap with no network, a read-only system, only its session folder writable and resource limits.
 */
export const localCodeInterpreter: ProviderFactory<CodeInterpreterProvider> = {
  type: 'local',
  kind: 'code_interpreter',
  autoInstance: true,
  enginePresent: () => findBwrap() !== undefined,
  description:
    'Python and JavaScript in bubblewrap sandboxes on this machine (no network, limits, warm interpreters per session)',
  create: (name, raw, ctx) => {
    const o = parseOptions(raw);
    if (!o.bwrapPath && !o.allowUnsandboxed) {
      throw new Error(
        'bubblewrap (bwrap) was not found: install it (Debian: apt-get install bubblewrap) or set option allow_unsandboxed: true to run code without a sandbox',
      );
    }
    if (!o.bwrapPath)
      ctx.logger.warn(
        { code_interpreter: name },
        'code interpreter runs WITHOUT a sandbox (allow_unsandboxed): code can read what Switchboard can read and reach the network',
      );
    const languages = languagesOf(o);
    const capabilities: CodeInterpreterCapabilities = {
      sessions: true,
      languages,
      files: true,
      sandbox: o.bwrapPath ? 'bubblewrap' : 'none',
    };
    const sessions = new Map<string, Session>();
    const asRoot = process.getuid?.() === 0;
    // Made on the first session, so a provider that never runs code leaves DATA_DIR as it was.
    let dirs: Promise<{ root: string; drivers: string }> | undefined;
    const instanceDirs = () => (dirs ??= prepareInstanceDirs(ctx.dataDir, name, asRoot && o.bwrapPath !== undefined));
    let nextUid = 0;

    const get = (id: string): Session => {
      const s = sessions.get(id);
      if (!s) throw badRequest('SB_ERR_CODE_SESSION_NOT_FOUND', `Code interpreter session '${id}' not found`);
      s.lastUsed = Date.now();
      return s;
    };

    const repl = async (s: Session, language: Language): Promise<Repl> => {
      let r = s.repls.get(language);
      if (!r || r.exited) {
        const { drivers } = await instanceDirs();
        const launch = o.bwrapPath
          ? sandboxed(o, language, s.files.dir, drivers, s.ids)
          : unsandboxed(o, language, s.files.dir);
        r = new Repl(launch, o.maxOutputBytes);
        s.repls.set(language, r);
      }
      return r;
    };

    const stop = async (s: Session) => {
      for (const r of s.repls.values()) r.kill();
      s.repls.clear();
      await s.files.remove();
    };

    const idleMs = o.idleTimeoutSeconds * 1000;
    const reaper = setInterval(
      () => {
        const now = Date.now();
        for (const s of sessions.values()) {
          if (now - s.lastUsed <= idleMs) continue;
          sessions.delete(s.record.session_id);
          void stop(s);
          ctx.logger.info(
            { code_interpreter: name, session_id: s.record.session_id },
            'idle code interpreter session closed',
          );
        }
      },
      Math.min(idleMs / 4, 30_000),
    );
    reaper.unref();

    return {
      name,
      type: 'local',
      kind: 'code_interpreter',
      capabilities,

      async createSession(req) {
        if (sessions.size >= o.maxSessions) {
          throw tooManyRequests(
            'SB_ERR_CODE_SESSION_LIMIT',
            `Code interpreter '${name}' already runs ${o.maxSessions} sessions (option max_sessions); delete one and try again`,
          );
        }
        const id = req.session_id ?? randomUUID();
        const ids =
          asRoot && o.bwrapPath
            ? { uid: UID_BASE + (nextUid++ % UID_SPAN), gid: UID_BASE + ((nextUid - 1) % UID_SPAN) }
            : undefined;
        const files = new SessionFiles(join((await instanceDirs()).root, id), ids);
        await files.create();
        const record: CodeSession = {
          session_id: id,
          status: 'active',
          language: req.language,
          created_at: new Date().toISOString(),
        };
        sessions.set(id, { record, files, repls: new Map(), history: [], lastUsed: Date.now(), ids });
        return { ...record };
      },
      async listSessions() {
        return [...sessions.values()].map((s) => ({ ...s.record }));
      },
      async getSession(id) {
        const s = sessions.get(id);
        return s && { ...s.record };
      },
      async deleteSession(id) {
        const s = sessions.get(id);
        if (!s) return false;
        sessions.delete(id);
        await stop(s);
        return true;
      },

      async execute(id, code, language, opts): Promise<ExecuteResult> {
        const s = get(id);
        if (!languages.includes(language as Language)) {
          throw badRequest(
            'SB_ERR_CODE_LANGUAGE_UNSUPPORTED',
            `Language '${language}' is not supported; supported: ${languages.join(', ')}`,
          );
        }
        const timeout = opts?.timeoutSeconds ?? o.timeoutSeconds;
        if (timeout > o.maxTimeoutSeconds) {
          throw badRequest(
            'SB_ERR_CODE_TIMEOUT_TOO_LONG',
            `timeout_seconds may be at most ${o.maxTimeoutSeconds} (option max_timeout_seconds)`,
          );
        }
        const before = await s.files.snapshot();
        const started = Date.now();
        const out = await (await repl(s, language as Language)).run(code, timeout * 1000);
        const duration_ms = Date.now() - started;
        const files_created = await s.files.changedSince(before);
        s.lastUsed = Date.now();
        s.history.push({
          code,
          language,
          stdout: out.stdout,
          stderr: out.stderr,
          exit_code: out.exitCode,
          error: out.error,
          executed_at: new Date(started).toISOString(),
        });
        if (s.history.length > HISTORY_LIMIT) s.history.splice(0, s.history.length - HISTORY_LIMIT);
        return {
          session_id: id,
          stdout: out.stdout,
          stderr: out.stderr,
          exit_code: out.exitCode,
          result: out.result,
          error: out.error,
          duration_ms,
          files_created,
          truncated: out.truncated,
        };
      },
      async history(id, limit) {
        return get(id).history.slice(0, limit);
      },
      async uploadFile(id, filename, data) {
        await get(id).files.write(filename, data);
        return { filename, size: data.length };
      },
      async downloadFile(id, filename) {
        return get(id).files.read(filename);
      },

      async healthcheck() {
        // Without a sandbox the provider works, but an operator should see that it is not isolated.
        return o.bwrapPath ? 'ok' : 'reachable';
      },
      async close() {
        clearInterval(reaper);
        const all = [...sessions.values()];
        sessions.clear();
        await Promise.all(all.map(stop));
      },
    };
  },
};

export const providers: ProviderFactory[] = [localCodeInterpreter as ProviderFactory];
