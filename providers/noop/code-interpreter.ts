import { randomUUID } from 'node:crypto';
import type {
  CodeInterpreterCapabilities,
  CodeInterpreterProvider,
  CodeSession,
} from '../../core/primitives/code-interpreter.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { unsupported } from './unsupported.ts';

/** No languages: running code needs a sandbox, which noop does not have. */
const CAPABILITIES: CodeInterpreterCapabilities = { sessions: true, languages: [], files: false };

/** Session records in memory so clients can exercise the lifecycle; execution and files answer 501. */
export const noopCodeInterpreter: ProviderFactory<CodeInterpreterProvider> = {
  type: 'noop',
  kind: 'code_interpreter',
  autoInstance: true,
  description: 'Keeps code interpreter session records in memory; executes nothing',
  create: (name) => {
    const sessions = new Map<string, CodeSession>();
    const no = (what: string): never => unsupported('code_interpreter', name, what);
    return {
      name,
      type: 'noop',
      kind: 'code_interpreter',
      capabilities: CAPABILITIES,
      async createSession(req) {
        const s: CodeSession = {
          session_id: req.session_id ?? randomUUID(),
          status: 'active',
          language: req.language,
          created_at: new Date().toISOString(),
        };
        sessions.set(s.session_id, s);
        return { ...s };
      },
      async listSessions() {
        return [...sessions.values()].map((s) => ({ ...s }));
      },
      async getSession(id) {
        const s = sessions.get(id);
        return s && { ...s };
      },
      async deleteSession(id) {
        return sessions.delete(id);
      },
      execute: async () => no('code execution'),
      // Nothing ever runs, so every session's history is truthfully empty.
      history: async () => [],
      uploadFile: async () => no('file upload'),
      downloadFile: async () => no('file download'),
      healthcheck: async () => 'ok',
      close: async () => sessions.clear(),
    };
  },
};
