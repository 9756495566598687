import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { forbidden, notFound } from '../../../core/errors.ts';
import type { BrowserProvider } from '../../../core/primitives/browser.ts';
import { SseStreams } from '../agents/sse.ts';

/**
 * Live-view URLs carry their own credential: an HMAC over the session id, the provider instance and the
 * expiry, with a key made per process (a browser session lives in one process, so its viewer does too).
 */
export class LiveViewSigner {
  private readonly key = randomBytes(32);

  private mac(provider: string, sessionId: string, exp: number): string {
    return createHmac('sha256', this.key).update(`${provider}\n${sessionId}\n${exp}`).digest('base64url');
  }

  /** The viewer path for a session, valid until `exp` (unix seconds). */
  path(provider: string, sessionId: string, exp: number): string {
    const q = new URLSearchParams({ p: provider, exp: String(exp), sig: this.mac(provider, sessionId, exp) });
    return `/api/v1/browser/live/${encodeURIComponent(sessionId)}?${q}`;
  }

  /** Throws 403 unless the signature matches and has not expired. */
  verify(provider: string, sessionId: string, exp: number, sig: string): void {
    const want = Buffer.from(this.mac(provider, sessionId, exp));
    const got = Buffer.from(sig);
    if (got.length !== want.length || !timingSafeEqual(got, want))
      throw forbidden('SB_ERR_LIVE_VIEW_INVALID', 'This live-view link is not valid; ask for a new one');
    if (exp * 1000 < Date.now())
      throw forbidden('SB_ERR_LIVE_VIEW_EXPIRED', 'This live-view link has expired; ask for a new one');
  }
}

const Query = Type.Object({
  p: Type.String({ minLength: 1 }),
  exp: Type.Integer(),
  sig: Type.String({ minLength: 1 }),
});
const Params = Type.Object({ session_id: Type.String({ minLength: 1 }) });

function viewerPage(framesUrl: string, sessionId: string, nonce: string): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Live view: ${esc(sessionId)}</title>
<style nonce="${nonce}">body{margin:0;background:#111;color:#ddd;font:14px system-ui,sans-serif}header{padding:8px 12px}img{display:block;max-width:100%;margin:0 auto}</style>
</head><body><header>Live view of browser session <b>${esc(sessionId)}</b> · <span id="state">connecting…</span></header>
<img id="frame" alt="The session's page, updated live">
<script nonce="${nonce}">
const img = document.getElementById('frame'), state = document.getElementById('state');
const es = new EventSource(${JSON.stringify(framesUrl)});
es.onmessage = (m) => { const f = JSON.parse(m.data); img.src = 'data:' + f.mime + ';base64,' + f.data; state.textContent = 'live'; };
es.onerror = () => { state.textContent = 'disconnected (the link may have expired)'; es.close(); };
</script></body></html>`;
}

/**
 * The viewer and its frame stream. Registered outside the /api/v1 auth scope: the signed link is the only
 * credential, so it can be opened in any browser.
 */
export function liveViewRoutes(
  signer: LiveViewSigner,
  providerOf: (name: string) => BrowserProvider | undefined,
): FastifyPluginAsyncTypebox {
  return async (app) => {
    const sse = new SseStreams();
    app.addHook('onClose', async () => sse.closeAll());
    const check = (params: { session_id: string }, q: { p: string; exp: number; sig: string }) => {
      signer.verify(q.p, params.session_id, q.exp, q.sig);
      const provider = providerOf(q.p);
      if (!provider) throw forbidden('SB_ERR_LIVE_VIEW_INVALID', 'This live-view link is not valid; ask for a new one');
      return provider;
    };

    app.get(
      '/:session_id',
      {
        schema: {
          tags: ['browser'],
          summary: 'Live view of a browser session (signed link)',
          params: Params,
          querystring: Query,
          response: { 200: Type.String() },
        },
      },
      async (request, reply) => {
        check(request.params, request.query);
        const nonce = randomBytes(12).toString('base64');
        const q = new URLSearchParams({ p: request.query.p, exp: String(request.query.exp), sig: request.query.sig });
        const frames = `${encodeURIComponent(request.params.session_id)}/frames?${q}`;
        return reply
          .type('text/html; charset=utf-8')
          .header(
            'content-security-policy',
            `default-src 'none'; img-src data:; connect-src 'self'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'`,
          )
          .header('referrer-policy', 'no-referrer')
          .send(viewerPage(frames, request.params.session_id, nonce));
      },
    );

    app.get(
      '/:session_id/frames',
      {
        schema: {
          tags: ['browser'],
          summary: 'Server-sent frames of a live view: data: {mime, data(base64)}',
          params: Params,
          querystring: Query,
          produces: ['text/event-stream'],
        },
      },
      async (request, reply) => {
        const provider = check(request.params, request.query);
        const id = request.params.session_id;
        if (!(await provider.getSession(id)))
          throw notFound('SB_ERR_BROWSER_SESSION_NOT_FOUND', `Browser session '${id}' not found`);
        const stream = sse.start(request, reply);
        let stop = () => {};
        // The link's expiry ends the stream too, not only new connections.
        const expiry = setTimeout(() => stream.end(), Math.max(0, request.query.exp * 1000 - Date.now()));
        stream.closed.addEventListener('abort', () => {
          clearTimeout(expiry);
          stop();
        });
        try {
          stop = await provider.watch(id, (frame) => stream.send(frame));
          if (stream.closed.aborted) stop();
        } catch (err) {
          stream.send({ error: err instanceof Error ? err.message : String(err) });
          stream.end();
        }
      },
    );
  };
}
