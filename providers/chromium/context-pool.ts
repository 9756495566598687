import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';

/** An isolated context with its page, ready to become a session. */
export interface PreparedPage {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** A CDP session of the page, for reads in an isolated world (page-actions.ts). */
  cdp: CDPSession;
  /** The page's main frame, where those reads run. */
  frameId: string;
}

/** The default viewport of a context; a session asking for another one gets it set on its page. */
export const DEFAULT_VIEWPORT = { width: 1280, height: 720 };

/** A fresh context and page on `browser`: nothing has run in it yet. */
export async function preparePage(browser: Browser, defaultTimeoutMs: number): Promise<PreparedPage> {
  const context = await browser.newContext({
    viewport: DEFAULT_VIEWPORT,
    acceptDownloads: false,
    serviceWorkers: 'block',
  });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(defaultTimeoutMs);
    const cdp = await context.newCDPSession(page);
    const { frameTree } = await cdp.send('Page.getFrameTree');
    return { browser, context, page, cdp, frameId: frameTree.frame.id };
  } catch (err) {
    await context.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Contexts with a page made ahead of time. Opening a page costs a new renderer process (most of a session start,
 * docs/browser.md "Performance"); with one waiting, a start only hands it over. The pool counts in max_sessions:
 * it never holds more than `room()` (the cap minus the open sessions), so the renderers alive never exceed the
 * cap. Entries are promises: a start that finds one still being made waits for it instead of making a second.
 */
export class ContextPool {
  /** Being made or waiting, oldest first. */
  private entries: Array<Promise<PreparedPage | undefined>> = [];
  /** Entries cleared while still being made: closed when they arrive. */
  private readonly dropped = new WeakSet<Promise<PreparedPage | undefined>>();
  private closed = false;

  constructor(
    private readonly size: number,
    /** How many more contexts may exist now (max_sessions minus the sessions open or starting). */
    private readonly room: () => number,
    private readonly make: () => Promise<PreparedPage>,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Contexts waiting or being made. */
  get count(): number {
    return this.entries.length;
  }

  /** A prepared page on `browser` if one is waiting or being made, else undefined (the caller makes its own). */
  async take(browser: Browser): Promise<PreparedPage | undefined> {
    while (this.entries.length > 0) {
      const p = await this.entries.shift();
      // Made before a crash and relaunch: its browser is gone.
      if (p && p.browser === browser && browser.isConnected()) return p;
      if (p) void p.context.close().catch(() => undefined);
    }
    return undefined;
  }

  /** Start making contexts up to the pool size, within the room the cap leaves. Call it when the browser is up. */
  refill(): void {
    if (this.closed) return;
    while (this.entries.length < Math.min(this.size, this.room())) {
      const entry: Promise<PreparedPage | undefined> = this.make().then(
        (p) => {
          const waiting = this.entries.includes(entry);
          // Cleared meanwhile, or sessions made their own contexts while this one was on its way and the cap
          // is reached. (An entry already taken by a start is not waiting: the start gets it.)
          if (this.dropped.has(entry) || (waiting && this.entries.length > this.room())) {
            this.entries = this.entries.filter((e) => e !== entry);
            void p.context.close().catch(() => undefined);
            return undefined;
          }
          return p;
        },
        (err) => {
          this.entries = this.entries.filter((e) => e !== entry);
          if (!this.closed && !this.dropped.has(entry)) this.onError(err);
          return undefined;
        },
      );
      this.entries.push(entry);
    }
  }

  /**
   * Close what is waiting; what is still being made is closed when it arrives (not awaited: after a crash its
   * calls fail by themselves, and on shutdown closing the browser ends them).
   */
  clear(): void {
    const entries = this.entries;
    this.entries = [];
    for (const e of entries) {
      this.dropped.add(e);
      void e.then((p) => p?.context.close().catch(() => undefined));
    }
  }

  close(): void {
    this.closed = true;
    this.clear();
  }
}
