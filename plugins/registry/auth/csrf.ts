import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { forbidden } from '../../../core/errors.ts';
import { CSRF_FIELD, CSRF_HEADER, csrfMatches } from './session.ts';

/** The methods a forged cross-site request could use to change something. */
export const UNSAFE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Posting credentials or leaving carries no forged intent worth a token; /validate judges another request. */
export const CSRF_EXEMPT: ReadonlySet<string> = new Set([
  '/api/auth/login',
  '/login',
  '/api/auth/logout',
  '/logout',
  '/validate',
]);

/**
 * CSRF check for requests authenticated by the session cookie: the token
 * (GET /api/auth/csrf, or the `mcp_gateway_csrf` cookie) must come back in the
 * `X-CSRF-Token` header or the `csrf_token` form field. The registry auth
 * plugin runs this on every unsafe cookie-authenticated request; routes may
 * call it again (idempotent). Bearer and Basic requests are not affected.
 */
export function checkCsrf(request: FastifyRequest): void {
  if (request.authSource !== 'cookie' || !request.session) return;
  if (CSRF_EXEMPT.has(request.url.split('?')[0])) return;
  const key = request.server.registryAuth.authenticator.secretKey;
  const fromHeader = request.headers[CSRF_HEADER];
  // Cast, not typed: this runs before validation for every unsafe route, whatever its body schema
  // (a form, JSON, or none); the object check on the next line is what makes the read safe.
  const body = request.body as Record<string, unknown> | undefined;
  const fromForm = body && typeof body === 'object' ? body[CSRF_FIELD] : undefined;
  const presented = typeof fromHeader === 'string' ? fromHeader : typeof fromForm === 'string' ? fromForm : undefined;
  if (!csrfMatches(key, request.session.sid, presented)) {
    throw forbidden(
      'SB_ERR_AUTH_CSRF',
      `Missing or invalid CSRF token: send the token from GET /api/auth/csrf in the ${CSRF_HEADER} header or the ${CSRF_FIELD} form field`,
    );
  }
}

/**
 * Runs checkCsrf before validation on every unsafe request of the routes
 * registered after this call in `app`'s context. Only routes that take an
 * unsafe method get the hook: a GET-only route (the /validate hot path among
 * them) would run a stage that always passes.
 */
export function attachCsrfCheck(app: FastifyInstance): void {
  const hook = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    if (!UNSAFE_METHODS.has(request.method)) {
      done();
      return;
    }
    try {
      checkCsrf(request);
      done();
    } catch (err) {
      done(err as Error);
    }
  };
  app.addHook('onRoute', (route) => {
    if (![route.method].flat().some((m) => UNSAFE_METHODS.has(m))) return;
    const own = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [hook, ...own];
  });
}
