import type { BrowserProvider } from '../../../../../core/primitives/browser.ts';
import { pickTools, type BoundTool, type ToolGroup } from '../catalog.ts';
import { EXPORT_ONLY_TOOLS } from '../export/extra-tools.ts';
import { lazySession } from './lazy-session.ts';
import { str } from './memory-namespaces.ts';

export const BROWSER_TOOLS = EXPORT_ONLY_TOOLS.browser;

/** Which capability each tool needs; a provider without it does not get the tool offered. */
const NEEDS: Record<string, string> = { navigate: 'navigation', read_page: 'navigation', click: 'navigation', type_text: 'navigation', screenshot: 'screenshots', evaluate_js: 'evaluate' };

/** Browser tools on one session per run, started on first use and stopped when the run ends. */
const browserGroup: ToolGroup = {
  key: 'browser',
  primitive: 'browser',
  catalog: async () => BROWSER_TOOLS,
  async bind(env) {
    if (!env.agent.primitives.browser?.enabled) return [];
    const b = env.resolve<BrowserProvider>('browser');
    const session = lazySession(
      async () => (await b.startSession(env.principal.id, {})).session_id,
      (id) => b.stopSession(id),
      env.defer,
    );
    const run: Record<string, BoundTool['run']> = {
      navigate: async (i) => JSON.stringify(await b.navigate(await session(), str(i, 'url')!)),
      read_page: async () => JSON.stringify(await b.content(await session())),
      click: async (i) => JSON.stringify(await b.click(await session(), str(i, 'selector')!)),
      type_text: async (i) => JSON.stringify(await b.typeText(await session(), str(i, 'selector')!, str(i, 'text')!)),
      screenshot: async () => JSON.stringify(await b.screenshot(await session())),
      evaluate_js: async (i) => JSON.stringify(await b.evaluate(await session(), str(i, 'expression')!)),
    };
    return pickTools(BROWSER_TOOLS, env.agent.primitives.browser.tools)
      .filter((t) => b.capabilities[NEEDS[t.name]!] === true)
      .map((t) => ({ ...t, primitive: 'browser', provider: b.name, run: run[t.name]! }));
  },
};

export default browserGroup;
