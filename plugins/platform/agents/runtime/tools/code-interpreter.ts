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
    const session = lazySession(
      async () => (await ci.createSession({ language: languages[0]! })).session_id,
      (id) => ci.deleteSession(id),
      env.defer,
    );
    return pickTools(CODE_TOOLS, env.agent.primitives.code_interpreter.tools).map((t) => ({
      ...t,
      primitive: 'code_interpreter',
      provider: ci.name,
      run: async (input) => {
        const language = str(input, 'language', false) ?? languages[0]!;
        if (!languages.includes(language)) throw new Error(`language '${language}' is not supported (supported: ${languages.join(', ')})`);
        return JSON.stringify(await ci.execute(await session(), str(input, 'code')!, language));
      },
    }));
  },
};

export default codeInterpreterGroup;
