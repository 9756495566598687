import { FILENAME_PATTERN, type CodeInterpreterProvider } from '../../../../../core/primitives/code-interpreter.ts';
import { pickTools, type ToolGroup, type ToolSpec } from '../catalog.ts';
import { lazySession } from './lazy-session.ts';
import { str } from './memory-namespaces.ts';

export const CODE_TOOLS: ToolSpec[] = [
  {
    name: 'execute_code',
    description:
      'Run code in a sandboxed interpreter session kept for this run; returns stdout, stderr, exit code and result.',
    input_schema: {
      type: 'object',
      properties: { code: { type: 'string' }, language: { type: 'string', default: 'python' } },
      required: ['code'],
    },
  },
  {
    name: 'upload_file',
    description: "Write text into a file of the run's interpreter session, for code to read.",
    input_schema: {
      type: 'object',
      properties: { filename: { type: 'string' }, content: { type: 'string' } },
      required: ['filename', 'content'],
    },
  },
  {
    name: 'read_file',
    description: "Read a text file of the run's interpreter session (for example one that code wrote).",
    input_schema: { type: 'object', properties: { filename: { type: 'string' } }, required: ['filename'] },
  },
];

const FILE_TOOLS = new Set(['upload_file', 'read_file']);
const READ_LIMIT = 100_000;

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
    const execute = async (input: Record<string, unknown>) => {
      const asked = str(input, 'language', false);
      if (asked && !languages.includes(asked))
        throw new Error(`language '${asked}' is not supported (supported: ${languages.join(', ')})`);
      if (asked && !started) sessionLanguage = asked;
      started = true;
      return JSON.stringify(await ci.execute(await session(), str(input, 'code')!, asked ?? sessionLanguage));
    };
    const name = (input: Record<string, unknown>) => {
      const f = str(input, 'filename')!;
      if (!new RegExp(FILENAME_PATTERN).test(f))
        throw new Error(`file name '${f}' is not allowed: letters, digits, spaces, '.', '_' or '-', no folders`);
      return f;
    };
    const run: Record<string, (input: Record<string, unknown>) => Promise<string>> = {
      execute_code: execute,
      upload_file: async (input) =>
        JSON.stringify(
          await ci.uploadFile(await session(), name(input), Buffer.from(str(input, 'content') ?? '', 'utf8')),
        ),
      read_file: async (input) => {
        const data = await ci.downloadFile(await session(), name(input));
        if (!data) throw new Error(`file '${str(input, 'filename')}' does not exist in the session`);
        const text = data.toString('utf8');
        return text.length > READ_LIMIT
          ? `${text.slice(0, READ_LIMIT)}\n[truncated: ${text.length - READ_LIMIT} more characters]`
          : text;
      },
    };
    return pickTools(CODE_TOOLS, env.agent.primitives.code_interpreter.tools)
      .filter((t) => !FILE_TOOLS.has(t.name) || ci.capabilities.files === true)
      .map((t) => ({ ...t, primitive: 'code_interpreter', provider: ci.name, run: run[t.name]! }));
  },
};

export default codeInterpreterGroup;
