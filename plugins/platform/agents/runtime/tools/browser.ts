import type { BrowserProvider } from '../../../../../core/primitives/browser.ts';
import { pickTools, type BoundTool, type ToolGroup } from '../catalog.ts';
import { EXPORT_ONLY_TOOLS } from '../export/extra-tools.ts';
import { lazySession } from './lazy-session.ts';
import { str } from './memory-namespaces.ts';

export const BROWSER_TOOLS = EXPORT_ONLY_TOOLS.browser;

/** Which capability each tool needs; a provider without it does not get the tool offered. */
const NEEDS: Record<string, string> = {
  navigate: 'navigation',
  read_page: 'navigation',
  click: 'navigation',
  type_text: 'navigation',
  screenshot: 'screenshots',
  evaluate_js: 'evaluate',
};

/** A model reads text, not markup: the page's rendered text where the provider can evaluate, else the HTML without tags. */
const PAGE_TEXT_LIMIT = 20_000;
async function readableText(b: BrowserProvider, id: string): Promise<string> {
  let text: string;
  if (b.capabilities.evaluate === true) {
    const { result } = await b.evaluate(
      id,
      "document.title + '\\n\\n' + (document.body ? document.body.innerText : '')",
    );
    text = String(result ?? '');
  } else {
    const { content } = await b.content(id);
    text = content
      .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  }
  return text.length > PAGE_TEXT_LIMIT
    ? `${text.slice(0, PAGE_TEXT_LIMIT)}\n[truncated: ${text.length - PAGE_TEXT_LIMIT} more characters]`
    : text;
}

/** Base64 pixels would flood the model's context; it gets what was taken instead. */
function describeScreenshot(base64: string): string {
  const png = Buffer.from(base64, 'base64');
  const size = png.length >= 24 ? { width: png.readUInt32BE(16), height: png.readUInt32BE(20) } : {};
  return JSON.stringify({
    screenshot: 'png',
    ...size,
    bytes: png.length,
    note: 'The image was taken; its pixels are not part of this text.',
  });
}

/** Browser tools on one session per run, started on first use and stopped when the run ends (unless keep_session). */
const browserGroup: ToolGroup = {
  key: 'browser',
  primitive: 'browser',
  catalog: async () => BROWSER_TOOLS,
  async bind(env) {
    if (!env.agent.primitives.browser?.enabled) return [];
    const b = env.resolve<BrowserProvider>('browser');
    // keep_session leaves the session open after the run, for the caller to inspect or reuse.
    const keep = env.agent.primitives.browser.keep_session === true;
    const session = lazySession(
      async () => (await b.startSession(env.principal.id, {})).session_id,
      (id) => (keep ? Promise.resolve() : b.stopSession(id)),
      env.defer,
    );
    const run: Record<string, BoundTool['run']> = {
      navigate: async (i) => JSON.stringify(await b.navigate(await session(), str(i, 'url')!)),
      read_page: async () => readableText(b, await session()),
      click: async (i) => JSON.stringify(await b.click(await session(), str(i, 'selector')!)),
      type_text: async (i) => JSON.stringify(await b.typeText(await session(), str(i, 'selector')!, str(i, 'text')!)),
      screenshot: async () => describeScreenshot((await b.screenshot(await session())).data),
      evaluate_js: async (i) => JSON.stringify(await b.evaluate(await session(), str(i, 'expression')!)),
    };
    return pickTools(BROWSER_TOOLS, env.agent.primitives.browser.tools)
      .filter((t) => b.capabilities[NEEDS[t.name]!] === true)
      .map((t) => ({ ...t, primitive: 'browser', provider: b.name, run: run[t.name]! }));
  },
};

export default browserGroup;
