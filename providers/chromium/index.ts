import { randomUUID } from 'node:crypto';
import { tooManyRequests, unavailable } from '../../core/errors.ts';
import type { BrowserCapabilities, BrowserProvider, BrowserSession } from '../../core/primitives/browser.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { BrowserHost } from './browser-host.ts';
import { ContextPool, DEFAULT_VIEWPORT, preparePage } from './context-pool.ts';
import { startEgressProxy, type EgressProxy } from './egress-proxy.ts';
import { findChromium, parseOptions } from './options.ts';
import { pageActions } from './page-actions.ts';
import { SessionTable } from './session-table.ts';

const CAPABILITIES: BrowserCapabilities = {
  sessions: true,
  navigation: true,
  screenshots: true,
  evaluate: true,
  live_view: true,
};

/**
 * Real browser sessions: one Chromium process (launched on the first session, or at start with launch_at_start;
 * relaunched after a crash), one isolated context per session taken from a small pool of contexts made ahead,
 * and every request of every page through one guarded egress proxy.
 */
export const chromiumBrowser: ProviderFactory<BrowserProvider> = {
  type: 'chromium',
  kind: 'browser',
  autoInstance: true,
  enginePresent: () => findChromium() !== undefined,
  description:
    'Chromium through playwright-core: isolated sessions, live view, private networks refused (CHROMIUM_PATH or option executable_path)',
  create: (name, raw, ctx) => {
    const o = parseOptions(raw);
    const sessions = new SessionTable();
    // Starts past the cap check but not yet in the table: counted so concurrent starts cannot pass the cap.
    let starting = 0;
    let proxy: Promise<EgressProxy> | undefined;
    const egress = () =>
      (proxy ??= startEgressProxy(
        { allowPrivateNetworks: o.allowPrivateNetworks, allowedHosts: o.allowedHosts, blockedHosts: o.blockedHosts },
        (target, reason) =>
          ctx.logger.warn({ browser: name, target, reason }, 'browser request refused by the egress guard'),
      ));
    const host = o.executablePath
      ? new BrowserHost(
          o.executablePath,
          async () => (await egress()).url,
          () => {
            ctx.logger.warn(
              { browser: name },
              'the Chromium process exited; its sessions are lost and the next session relaunches it',
            );
            sessions.markAllLost();
            pool.clear();
          },
        )
      : undefined;
    const pool = new ContextPool(
      o.poolSize,
      () => o.maxSessions - sessions.size - starting,
      async () => preparePage(await needHost().get(), o.navigationTimeoutMs),
      (err) => ctx.logger.warn({ browser: name, err }, 'a browser context could not be made ahead'),
    );
    // Contexts are made ahead only while the browser runs: the pool never launches Chromium by itself.
    const refill = () => {
      if (host?.running) pool.refill();
    };
    if (host && o.launchAtStart) {
      // Off the request path: the first session then finds a warm browser and a context waiting.
      void host
        .get()
        .then(refill, (err) =>
          ctx.logger.warn({ browser: name, err }, 'Chromium did not launch at start; the first session tries again'),
        );
    }
    const needHost = (): BrowserHost => {
      if (!host) {
        throw unavailable(
          'SB_ERR_BROWSER_NO_CHROMIUM',
          `Browser provider '${name}' has no Chromium binary: install one (Debian: apt-get install chromium) or set CHROMIUM_PATH / option executable_path`,
        );
      }
      return host;
    };

    // Idle sessions hold a renderer each; close them after idle_timeout_seconds.
    const idleMs = o.idleTimeoutSeconds * 1000;
    const reaper = setInterval(
      () => {
        for (const s of sessions.idle(idleMs)) {
          sessions.remove(s.record.session_id);
          void s.context.close().catch(() => undefined);
          ctx.logger.info({ browser: name, session_id: s.record.session_id }, 'idle browser session closed');
        }
        refill();
      },
      Math.min(idleMs / 4, 30_000),
    );
    reaper.unref();

    const snapshot = (s: { record: BrowserSession }): BrowserSession => structuredClone(s.record);

    return {
      name,
      type: 'chromium',
      kind: 'browser',
      capabilities: CAPABILITIES,

      async startSession(ownerId, req) {
        const h = needHost();
        if (sessions.size + starting >= o.maxSessions) {
          throw tooManyRequests(
            'SB_ERR_BROWSER_SESSION_LIMIT',
            `Browser provider '${name}' already runs ${o.maxSessions} sessions (option max_sessions); stop one with DELETE /api/v1/browser/sessions/{id} and try again`,
          );
        }
        starting++;
        try {
          const browser = await h.get();
          const prepared = (await pool.take(browser)) ?? (await preparePage(browser, o.navigationTimeoutMs));
          // Pooled contexts are made at the default viewport; a session asking for another one gets it on its page.
          const v = req.viewport;
          if (v && (v.width !== DEFAULT_VIEWPORT.width || v.height !== DEFAULT_VIEWPORT.height)) {
            await prepared.page.setViewportSize(v).catch(async (err) => {
              await prepared.context.close().catch(() => undefined);
              throw err;
            });
          }
          const now = Date.now();
          const record: BrowserSession = {
            session_id: req.session_id ?? randomUUID(),
            owner_id: ownerId,
            status: 'active',
            created_at: new Date(now).toISOString(),
            viewport: req.viewport ?? null,
            config: req.config ?? {},
            last_used_at: new Date(now).toISOString(),
            url: 'about:blank',
            title: '',
          };
          const { context, page, cdp, frameId } = prepared;
          sessions.add({ record, context, page, cdp, frameId, lastUsed: now, lost: false });
          return structuredClone(record);
        } finally {
          starting--;
          refill();
        }
      },
      async getSession(id) {
        const s = sessions.get(id);
        return s && snapshot(s);
      },
      async listSessions(ownerId) {
        return sessions.list(ownerId).map(snapshot);
      },
      async stopSession(id) {
        const s = sessions.remove(id);
        if (!s) return false;
        await s.context.close().catch(() => undefined);
        refill();
        return true;
      },
      ...pageActions(sessions, o),
      async healthcheck() {
        if (!host) return 'down';
        return 'ok';
      },
      async close() {
        clearInterval(reaper);
        pool.close();
        for (const s of sessions.all()) sessions.remove(s.record.session_id);
        await host?.close();
        await (await proxy?.catch(() => undefined))?.close();
      },
    };
  },
};

export const providers: ProviderFactory[] = [chromiumBrowser as ProviderFactory];
