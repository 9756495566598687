import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { BrowserActionError, type BrowserSession } from '../../core/primitives/browser.ts';

/** A session's record plus the isolated browser context and page behind it. */
export interface LiveSession {
  record: BrowserSession;
  context: BrowserContext;
  page: Page;
  /** The page's CDP session and main frame, for reads in an isolated world (page-actions.ts). */
  cdp: CDPSession;
  frameId: string;
  lastUsed: number;
  /** Set when the browser process died under the session. */
  lost: boolean;
}

/**
 * The sessions of one provider instance. Records outlive their context only when the browser dies (so the
 * owner is told the session was lost rather than that it never existed).
 */
export class SessionTable {
  private readonly sessions = new Map<string, LiveSession>();

  get size(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (!s.lost) n++;
    return n;
  }

  has(id: string): boolean {
    return this.sessions.has(id);
  }

  add(s: LiveSession): void {
    this.sessions.set(s.record.session_id, s);
  }

  get(id: string): LiveSession | undefined {
    return this.sessions.get(id);
  }

  /** A session that can take a page action, touched as used. */
  usable(id: string): LiveSession {
    const s = this.sessions.get(id);
    if (!s) throw new BrowserActionError(`Browser session '${id}' not found`);
    if (s.lost)
      throw new BrowserActionError(
        `Browser session '${id}' was lost when the browser process exited; stop it and start a new session`,
      );
    s.lastUsed = Date.now();
    s.record.last_used_at = new Date(s.lastUsed).toISOString();
    return s;
  }

  list(ownerId?: string): LiveSession[] {
    return [...this.sessions.values()].filter((s) => ownerId === undefined || s.record.owner_id === ownerId);
  }

  remove(id: string): LiveSession | undefined {
    const s = this.sessions.get(id);
    this.sessions.delete(id);
    return s;
  }

  markAllLost(): void {
    for (const s of this.sessions.values()) {
      s.lost = true;
      s.record.status = 'stopped';
    }
  }

  /** Sessions unused for longer than `idleMs`. */
  idle(idleMs: number, now = Date.now()): LiveSession[] {
    return [...this.sessions.values()].filter((s) => now - s.lastUsed > idleMs);
  }

  all(): LiveSession[] {
    return [...this.sessions.values()];
  }
}
