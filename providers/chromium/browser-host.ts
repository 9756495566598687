import type { Browser } from 'playwright-core';

/**
 * The flags of a headless server: no sandbox (Switchboard often runs as root in a container), no GPU, and none
 * of Chromium's own background traffic (updates, sync, QUIC probes) that a closed network refuses.
 */
const SERVER_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  // WebRTC must not reach around the egress proxy over UDP.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/**
 * One Chromium process, launched on first need and launched again after it dies. `onExit` runs when the
 * process goes away unexpectedly, so sessions on it can be marked lost.
 */
export class BrowserHost {
  private browser: Browser | undefined;
  private launching: Promise<Browser> | undefined;
  private closing = false;

  constructor(
    private readonly executablePath: string,
    private readonly proxyUrl: () => Promise<string>,
    private readonly onExit: () => void,
  ) {}

  get running(): boolean {
    return this.browser?.isConnected() === true;
  }

  async get(): Promise<Browser> {
    if (this.browser?.isConnected()) return this.browser;
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    const { chromium } = await import('playwright-core');
    const proxy = await this.proxyUrl();
    const browser = await chromium.launch({
      executablePath: this.executablePath,
      headless: true,
      args: [...SERVER_FLAGS, `--proxy-server=${proxy}`, '--proxy-bypass-list=<-loopback>'],
      // Switchboard closes the browser itself on shutdown; Playwright's own signal handlers would race it.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    browser.on('disconnected', () => {
      if (this.browser === browser) this.browser = undefined;
      if (!this.closing) this.onExit();
    });
    this.browser = browser;
    return browser;
  }

  async close(): Promise<void> {
    this.closing = true;
    const b = this.browser ?? (await this.launching?.catch(() => undefined));
    this.browser = undefined;
    await b?.close().catch(() => undefined);
  }
}
