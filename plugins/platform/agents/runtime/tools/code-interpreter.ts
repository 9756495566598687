import type { CodeInterpreterProvider } from '../../../../../core/primitives/code-interpreter.ts';
import { pickTools, type ToolGroup, type ToolSpec } from '../catalog.ts';
import { lazySession } from './lazy-session.ts';
import { str } from './memory-namespaces.ts';

export const CODE_TOOLS: ToolSpec[] = [
  {
    name: 'execute_code',
    description: 'Run code in a sandboxed interpreter session kept for this run; returns stdout, stderr, exit code and result.',
    input_schema: { type: 'object', properties: { code: { type: 'string' }, language: { type: 'string', default: 'python' } }, required: ['code'] },
  },
];

/** execute_code, offered only when the provider can execute at least one language. */
const codeInterpreterGroup: ToolGroup = {
  key: 'code_interpreter',
  primitive: 'code_interpreter',
  catalog: async () => CODE_TOOLS,
  async bind(env) {
    if (!env.agent.primitives.code_interpreter?.enabled) return [];
    const ci = env.resolve<CodeInterpreterProvider>('code_interpreter');
    const languages = ci.capabilities.languages ?? [];
    if (languages.length === 0) return [];
    // The session takes the language of the first call; calls without one use the session's.
    let sessionLanguage = languages[0]!;
    let started = false;
    const session = lazySession(
      async () => (await ci.createSession({ language: sessionLanguage })).session_id,
      (id) => ci.deleteSession(id),
      env.defer,
    );
    return pickTools(CODE_TOOLS, env.agent.primitives.code_interpreter.tools).map((t) => ({
      ...t,
      primitive: 'code_interpreter',
      provider: ci.name,
      run: async (input) => {
        const asked = str(input, 'language', false);
        if (asked && !languages.includes(asked)) throw new Error(`language '${asked}' is not supported (supported: ${languages.join(', ')})`);
        if (asked && !started) sessionLanguage = asked;
        started = true;
        return JSON.stringify(await ci.execute(await session(), str(input, 'code')!, asked ?? sessionLanguage));
      },
    }));
  },
};

export default codeInterpreterGroup;
