import { BrowserActionError, type BrowserProvider, type LiveFrame } from '../../core/primitives/browser.ts';
import { decide, REFUSAL_HEADER } from './egress-proxy.ts';
import type { ChromiumOptions } from './options.ts';
import type { LiveSession, SessionTable } from './session-table.ts';

/** Playwright prefixes its messages with the call and appends a call log; the user needs the first line. */
function reason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.replace(/^(page|locator|frame)\.\w+: /, '');
}

async function attempt<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof BrowserActionError) throw err;
    throw new BrowserActionError(reason(err), { cause: err });
  }
}

/** The isolated world reads run in; one per document, made again by Chromium after each navigation. */
const READ_WORLD = 'switchboard-read';

/** The document as HTML, doctype included (what Playwright's page.content() returns). */
const DOCUMENT_HTML = `(document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') +
  (document.documentElement ? document.documentElement.outerHTML : '')`;

/**
 * Evaluate a read-only expression in an isolated world of the page's main frame, over the page's own CDP
 * session: two round trips. Playwright's content() first injects its whole selector engine into a utility world
 * after every navigation (~20-40 ms, docs/browser.md "Performance"); and the page's main world would let the
 * page's scripts redefine what we read (an isolated world has its own DOM wrappers and globals).
 */
async function readPage<T>(s: LiveSession, expression: string): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      const { executionContextId } = await s.cdp.send('Page.createIsolatedWorld', {
        frameId: s.frameId,
        worldName: READ_WORLD,
      });
      const r = await s.cdp.send('Runtime.evaluate', {
        expression,
        contextId: executionContextId,
        returnByValue: true,
      });
      if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
      return r.result.value as T;
    } catch (err) {
      // A navigation between the two calls destroys the world we were given; the next document has a new one.
      if (tries >= 2) throw err;
      if (/context|frame/i.test(String(err))) {
        const { frameTree } = await s.cdp.send('Page.getFrameTree');
        s.frameId = frameTree.frame.id;
        continue;
      }
      throw err;
    }
  }
}

type Actions = Pick<
  BrowserProvider,
  'navigate' | 'content' | 'click' | 'typeText' | 'evaluate' | 'screenshot' | 'watch'
>;

/** Page operations of the chromium provider; each one runs on a session's own page. */
export function pageActions(sessions: SessionTable, o: ChromiumOptions): Actions {
  const policy = {
    allowPrivateNetworks: o.allowPrivateNetworks,
    allowedHosts: o.allowedHosts,
    blockedHosts: o.blockedHosts,
  };
  // Element actions wait this long for their selector rather than the navigation timeout.
  const actionTimeout = Math.min(o.navigationTimeoutMs, 5000);

  return {
    async navigate(id, url, opts) {
      const s = sessions.usable(id);
      const target = new URL(url);
      // file:, chrome:, data:, javascript: ... never reach the egress proxy, so they are refused here.
      if (target.protocol !== 'http:' && target.protocol !== 'https:') {
        throw new BrowserActionError(`Navigation to '${target.protocol}' URLs is not allowed; use http or https`);
      }
      // The proxy decides every request; checking here too gives the caller the reason instead of an error page.
      const d = await decide(target.hostname, policy);
      if (!d.ok) throw new BrowserActionError(`Navigation refused: ${d.reason}`);
      const response = await attempt(() =>
        s.page.goto(target.href, { waitUntil: 'load', timeout: opts?.timeoutMs ?? o.navigationTimeoutMs }),
      );
      const refusal = response ? await response.headerValue(REFUSAL_HEADER) : null;
      if (refusal) throw new BrowserActionError(`Navigation refused after a redirect: ${refusal}`);
      const title = await attempt(() => readPage<string>(s, 'document.title'));
      s.record.url = s.page.url();
      s.record.title = title;
      return { session_id: id, url: s.page.url(), title };
    },

    async content(id) {
      const s = sessions.usable(id);
      return { content: await attempt(() => readPage<string>(s, DOCUMENT_HTML)) };
    },

    async click(id, selector) {
      const s = sessions.usable(id);
      await attempt(() => s.page.click(selector, { timeout: actionTimeout }));
      s.record.url = s.page.url();
      return { session_id: id, status: 'ok' };
    },

    async typeText(id, selector, text) {
      const s = sessions.usable(id);
      await attempt(() => s.page.fill(selector, text, { timeout: actionTimeout }));
      return { session_id: id, status: 'ok' };
    },

    async evaluate(id, expression) {
      const s = sessions.usable(id);
      const value = await attempt(() => s.page.evaluate(expression));
      // JSON-safe: undefined, functions and symbols become null, as JSON.stringify would drop them.
      return { result: value === undefined ? null : JSON.parse(JSON.stringify(value) ?? 'null') };
    },

    async screenshot(id, opts) {
      const s = sessions.usable(id);
      const png = await attempt(() => s.page.screenshot({ type: 'png', fullPage: opts?.fullPage === true }));
      return { format: 'png', data: png.toString('base64') };
    },

    async watch(id, onFrame) {
      const s = sessions.usable(id);
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      // Periodic JPEG captures: unlike CDP screencast frames they also arrive for a page that does not repaint.
      const tick = async () => {
        if (stopped || s.lost) return;
        // Someone watching is using the session: keep the idle reaper away.
        s.lastUsed = Date.now();
        try {
          const jpeg = await s.page.screenshot({ type: 'jpeg', quality: 60 });
          if (!stopped) onFrame({ mime: 'image/jpeg', data: jpeg.toString('base64') } satisfies LiveFrame);
        } catch {
          // A frame missed while the page navigates; the next tick tries again.
        }
        if (!stopped) timer = setTimeout(tick, 1000 / o.liveViewFps);
      };
      void tick();
      return () => {
        stopped = true;
        if (timer) clearTimeout(timer);
      };
    },
  };
}
