import type { FastifyRequest } from 'fastify';
import { badRequest, forbidden, isSwitchboardError, notFound, type SwitchboardError } from '../../../core/errors.ts';
import type { Principal } from '../../../core/primitives/auth.ts';
import type { BrowserProvider, BrowserSession } from '../../../core/primitives/browser.ts';
import type { SwitchboardContext } from '../../context.ts';
import { mayChange } from '../ownership.ts';

export const browserFor = (sb: SwitchboardContext, request: FastifyRequest) =>
  sb.providers.resolve<BrowserProvider>('browser', request.headers);

export function principalOf(request: FastifyRequest): Principal {
  // The /api/v1 auth hook runs first and refuses requests it cannot identify.
  return request.principal!;
}

/**
 * The session, if the caller may use it. Info answers 404 for an unknown id;
 * the interaction endpoints answer 400 (spec 4.3). Someone else's session is
 * 403 for non-admins (spec 5.3).
 */
export async function ownedSession(
  provider: BrowserProvider,
  sessionId: string,
  principal: Principal,
  missing: 404 | 400,
): Promise<BrowserSession> {
  const session = await provider.getSession(sessionId);
  if (!session) {
    const detail = `Browser session '${sessionId}' not found`;
    throw missing === 404
      ? notFound('SB_ERR_BROWSER_SESSION_NOT_FOUND', detail)
      : badRequest('SB_ERR_BROWSER_SESSION_NOT_FOUND', detail);
  }
  // Sessions are private: no sharing, so use is the change rule of plugins/platform/ownership.ts.
  if (!mayChange(session, principal)) {
    throw forbidden('SB_ERR_BROWSER_NOT_OWNER', `Browser session '${sessionId}' belongs to another user`);
  }
  return session;
}

/** A failed page action is the caller's 400 (spec 4.3); 501/503 and other coded errors keep their status. */
export function actionFailed(sessionId: string, what: string, err: unknown): SwitchboardError {
  if (isSwitchboardError(err)) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return badRequest('SB_ERR_BROWSER_ACTION_FAILED', `Browser ${what} failed on session '${sessionId}': ${reason}`, err);
}
