import { randomUUID } from 'node:crypto';
import type { BrowserCapabilities, BrowserProvider, BrowserSession } from '../../core/primitives/browser.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { unsupported } from './unsupported.ts';

const CAPABILITIES: BrowserCapabilities = {
  sessions: true,
  navigation: false,
  screenshots: false,
  evaluate: false,
  live_view: false,
  missing_hint:
    'Page actions need Chromium: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH, then restart; the chromium provider becomes the default browser when a binary is found',
};

/**
 * Session records only: enough for clients to exercise the session lifecycle
 * and owner scoping with no browser installed. Every page action needs a real
 * browser and is declared unsupported.
 */
export const noopBrowser: ProviderFactory<BrowserProvider> = {
  type: 'noop',
  kind: 'browser',
  autoInstance: true,
  description: 'Keeps browser session records in memory; no page actions',
  create: (name) => {
    const sessions = new Map<string, BrowserSession>();
    const no = (what: string): never => unsupported('browser', name, what);
    return {
      name,
      type: 'noop',
      kind: 'browser',
      capabilities: CAPABILITIES,
      async startSession(ownerId, req) {
        const session: BrowserSession = {
          session_id: req.session_id ?? randomUUID(),
          owner_id: ownerId,
          status: 'active',
          created_at: new Date().toISOString(),
          viewport: req.viewport ?? null,
          config: req.config ?? {},
        };
        sessions.set(session.session_id, session);
        return structuredClone(session);
      },
      async getSession(id) {
        const s = sessions.get(id);
        return s && structuredClone(s);
      },
      async listSessions(ownerId) {
        return [...sessions.values()]
          .filter((s) => ownerId === undefined || s.owner_id === ownerId)
          .map((s) => structuredClone(s));
      },
      async stopSession(id) {
        return sessions.delete(id);
      },
      watch: async () => no('live view'),
      navigate: async () => no('navigation'),
      screenshot: async () => no('screenshots'),
      content: async () => no('reading page content'),
      click: async () => no('clicking'),
      typeText: async () => no('typing'),
      evaluate: async () => no('evaluating JavaScript'),
      healthcheck: async () => 'ok',
      close: async () => sessions.clear(),
    };
  },
};
