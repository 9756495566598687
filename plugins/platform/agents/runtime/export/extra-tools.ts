import type { ToolSpec } from '../catalog.ts';

const obj = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required });

/**
 * Tools the exported script runs itself through the gateway's browser and
 * code-interpreter routes (sessions opened lazily, closed at exit). The server
 * loop does not offer them yet, so they appear in exports only.
 */
export const EXPORT_ONLY_TOOLS: Record<'code_interpreter' | 'browser', ToolSpec[]> = {
  code_interpreter: [
    {
      name: 'execute_code',
      description: 'Run code in a sandboxed interpreter session; returns stdout, stderr and the result.',
      input_schema: obj({ code: { type: 'string' }, language: { type: 'string', default: 'python' } }, ['code']),
    },
  ],
  browser: [
    {
      name: 'navigate',
      description: 'Open a URL in the browser session.',
      input_schema: obj({ url: { type: 'string' } }, ['url']),
    },
    { name: 'read_page', description: 'Read the current page content.', input_schema: obj({}, []) },
    {
      name: 'click',
      description: 'Click the element matching a CSS selector.',
      input_schema: obj({ selector: { type: 'string' } }, ['selector']),
    },
    {
      name: 'type_text',
      description: 'Type text into the element matching a CSS selector.',
      input_schema: obj({ selector: { type: 'string' }, text: { type: 'string' } }, ['selector', 'text']),
    },
    { name: 'screenshot', description: 'Take a PNG screenshot (base64).', input_schema: obj({}, []) },
    {
      name: 'evaluate_js',
      description: 'Evaluate a JavaScript expression in the page.',
      input_schema: obj({ expression: { type: 'string' } }, ['expression']),
    },
  ],
};
