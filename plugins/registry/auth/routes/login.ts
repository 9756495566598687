import { createHash, randomBytes } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from '@sinclair/typebox';
import { SwitchboardError, badRequest, notFound, unauthorized } from '../../../../core/errors.ts';
import { navHtml } from '../../../pages/nav.ts';
import { ADMIN_GROUP } from '../identify.ts';
import { clientAddress } from '../login-lockout.ts';
import { CSRF_COOKIE, SESSION_COOKIE, cookieHeader, csrfTokenFor, readCookie, signSession } from '../session.ts';

const STATE_COOKIE = 'mcp_gateway_oauth_state';
const Html = Type.String({ description: 'text/html' });
const Redirect = Type.Null({ description: 'Redirect (Location header)' });
const ErrorBody = Type.Object({ detail: Type.Unknown(), code: Type.String() });
const LoginQuery = Type.Object({ error: Type.Optional(Type.String({ maxLength: 500 })) });
const ProviderParams = Type.Object({ provider: Type.String() });

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(error?: string, provider?: { kind: string; displayName: string }): string {
  const err = error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';
  const sso = provider
    ? `<a href="/api/auth/auth/${encodeURIComponent(provider.kind)}">Sign in with ${escapeHtml(provider.displayName)}</a>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in - MCP Registry</title></head>
<body>${navHtml()}<main><h1>Sign in</h1>${err}
<form method="post" action="/api/auth/login">
<label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>
<p id="providers">${sso}</p>
</main></body></html>`;
}

/** Local admin login, logout, IdP redirects and the CSRF token for cookie sessions. */
export default async function loginRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { authenticator, scopes, settings, idp, lockout } = app.registryAuth;
  const key = authenticator.secretKey;
  const sessionSeconds = settings.session_hours * 3600;

  // Secure when configured, or when the request itself came over TLS (or through a TLS proxy Fastify trusts).
  const secure = (request: FastifyRequest) => settings.secure_cookies || request.protocol === 'https';

  function setSession(
    request: FastifyRequest,
    reply: FastifyReply,
    p: { username: string; groups: string[]; provider: string },
  ): void {
    const { value, payload } = signSession(
      key,
      { ...p, scopes: scopes.scopesForGroups(p.groups) },
      settings.session_hours,
    );
    reply.header('set-cookie', [
      cookieHeader(SESSION_COOKIE, value, { maxAgeSeconds: sessionSeconds, httpOnly: true, secure: secure(request) }),
      // Readable by the page's scripts: they echo it in X-CSRF-Token.
      cookieHeader(CSRF_COOKIE, csrfTokenFor(key, payload.sid), {
        maxAgeSeconds: sessionSeconds,
        httpOnly: false,
        secure: secure(request),
      }),
    ]);
  }

  const loginForm = {
    schema: {
      tags: ['auth'],
      summary: 'Login form',
      querystring: LoginQuery,
      response: { 200: Html },
    },
  };
  // Handlers shared by two routes take their types from the routes' schemas.
  const showLogin = async (request: FastifyRequest<{ Querystring: Static<typeof LoginQuery> }>, reply: FastifyReply) =>
    reply.type('text/html; charset=utf-8').send(loginPage(request.query.error, idp));
  app.get('/api/auth/login', loginForm, showLogin);
  app.get('/login', { ...loginForm, schema: { ...loginForm.schema, summary: 'Login form (older path)' } }, showLogin);

  app.post(
    '/api/auth/login',
    {
      schema: {
        tags: ['auth'],
        summary: 'Log in as the local admin; sets the mcp_gateway_session cookie and redirects home',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: Type.Object({
          username: Type.String({ minLength: 1, maxLength: 256 }),
          password: Type.String({ minLength: 1, maxLength: 1024 }),
        }),
        response: { 302: Redirect, 401: Type.Union([ErrorBody, Html]), 429: Type.Union([ErrorBody, Html]) },
      },
    },
    async (request, reply) => {
      const { username, password } = request.body;
      // A browser that posted the form gets the form back; API clients get the JSON error.
      const wantsHtml = (request.headers.accept ?? '').includes('text/html');
      let attempt: Awaited<ReturnType<typeof lockout.begin>>;
      try {
        // Before the password is looked at: a locked-out attempt learns nothing, right password or not.
        attempt = await lockout.begin(username, clientAddress(request, lockout.trusted));
      } catch (err) {
        if (!wantsHtml || !(err instanceof SwitchboardError) || err.statusCode !== 429) throw err;
        request.log.info({ username }, 'registry login refused: locked out');
        for (const [k, v] of Object.entries(err.headers ?? {})) reply.header(k, v);
        return reply
          .status(429)
          .type('text/html; charset=utf-8')
          .send(loginPage(String(err.detail), idp));
      }
      if (!authenticator.checkAdminPassword(username, password)) {
        request.log.info({ username }, 'registry login failed');
        await attempt.failed();
        if (wantsHtml) {
          return reply
            .status(401)
            .type('text/html; charset=utf-8')
            .send(loginPage('Invalid username or password', idp));
        }
        throw unauthorized('SB_ERR_AUTH_LOGIN_FAILED', 'Invalid username or password');
      }
      await attempt.succeeded();
      await authenticator.readyForSessions();
      setSession(request, reply, { username, groups: [ADMIN_GROUP], provider: 'local' });
      request.log.info({ username }, 'registry login');
      return reply.redirect('/', 302);
    },
  );

  const clearAndRedirect = (to: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.session) await authenticator.revokeSession(request.session);
    reply.header('set-cookie', [
      cookieHeader(SESSION_COOKIE, '', { maxAgeSeconds: 0, httpOnly: true, secure: secure(request) }),
      cookieHeader(CSRF_COOKIE, '', { maxAgeSeconds: 0, httpOnly: false, secure: secure(request) }),
    ]);
    return reply.redirect(to, 302);
  };
  const logoutSchema = {
    schema: {
      tags: ['auth'],
      summary: 'Log out: clears the session cookie and redirects to the login page',
      response: { 302: Redirect },
    },
  };
  app.get('/api/auth/logout', logoutSchema, clearAndRedirect('/api/auth/login'));
  app.post('/api/auth/logout', logoutSchema, clearAndRedirect('/api/auth/login'));
  app.post('/logout', logoutSchema, clearAndRedirect('/login'));

  app.get(
    '/api/auth/providers',
    {
      schema: {
        tags: ['auth'],
        summary: 'Identity providers offered on the login page',
        response: {
          200: Type.Object({
            providers: Type.Array(
              Type.Object({ name: Type.String(), display_name: Type.String(), icon: Type.String() }),
            ),
          }),
        },
      },
    },
    async () => ({ providers: idp ? [{ name: idp.kind, display_name: idp.displayName, icon: idp.kind }] : [] }),
  );

  app.get(
    '/api/auth/csrf',
    {
      schema: {
        tags: ['auth'],
        summary: 'The CSRF token of the current session (send it as X-CSRF-Token on unsafe requests)',
        response: {
          200: Type.Object({ csrf_token: Type.String(), header: Type.String(), form_field: Type.String() }),
          401: ErrorBody,
        },
      },
    },
    async (request) => {
      if (!request.session) throw unauthorized('SB_ERR_AUTH_NO_SESSION', 'No session: log in at /api/auth/login first');
      return { csrf_token: csrfTokenFor(key, request.session.sid), header: 'X-CSRF-Token', form_field: 'csrf_token' };
    },
  );

  const redirectUri = (request: FastifyRequest) =>
    idp?.redirectUri ?? `${request.protocol}://${request.host}/api/auth/auth/callback`;

  const toProvider = async (
    request: FastifyRequest<{ Params: Static<typeof ProviderParams> }>,
    reply: FastifyReply,
  ) => {
    const name = request.params.provider;
    if (!idp || idp.kind !== name)
      throw notFound(
        'SB_ERR_AUTH_PROVIDER_UNKNOWN',
        `No identity provider '${name}' is configured${idp ? ` (available: ${idp.kind})` : ''}`,
      );
    if (!idp.clientId)
      throw badRequest(
        'SB_ERR_AUTH_PROVIDER_INCOMPLETE',
        `Identity provider '${name}' has no client_id configured (registry.idp.client_id)`,
      );
    const { authorization_endpoint } = await idp.endpoints();
    if (!authorization_endpoint)
      throw badRequest(
        'SB_ERR_AUTH_PROVIDER_INCOMPLETE',
        `Identity provider '${name}' has no authorization endpoint configured`,
      );
    const state = randomBytes(16).toString('base64url');
    // PKCE (S256) on top of the client secret: a stolen code is useless without this browser's verifier.
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const url = new URL(authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: idp.clientId,
      redirect_uri: redirectUri(request),
      scope: 'openid profile email',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    reply.header(
      'set-cookie',
      cookieHeader(STATE_COOKIE, `${state}.${verifier}`, {
        maxAgeSeconds: 600,
        httpOnly: true,
        secure: secure(request),
      }),
    );
    return reply.redirect(url.toString(), 302);
  };
  const providerSchema = (summary: string) => ({
    schema: {
      tags: ['auth'],
      summary,
      params: ProviderParams,
      response: { 302: Redirect, 400: ErrorBody, 404: ErrorBody },
    },
  });
  app.get('/api/auth/auth/:provider', providerSchema('Redirect to the identity provider'), toProvider);
  app.get('/auth/:provider', providerSchema('Redirect to the identity provider (older path)'), toProvider);

  app.get(
    '/api/auth/auth/callback',
    {
      schema: {
        tags: ['auth'],
        summary: 'Return from the identity provider: 302 home with a session, or to the login page with an error',
        querystring: Type.Object({
          code: Type.Optional(Type.String()),
          state: Type.Optional(Type.String()),
          error: Type.Optional(Type.String()),
          details: Type.Optional(Type.String()),
        }),
        response: { 302: Redirect },
      },
    },
    async (request, reply) => {
      const back = (msg: string) => reply.redirect(`/api/auth/login?error=${encodeURIComponent(msg)}`, 302);
      const { code, state, error, details } = request.query;
      if (error) return back(details ? `${error}: ${details}` : error);
      if (!idp) return back('No identity provider is configured');
      const [expected, verifier] = (readCookie(request.headers.cookie, STATE_COOKIE) ?? '').split('.');
      if (!code || !state || !expected || !verifier || state !== expected)
        return back('Login state mismatch; start again');
      try {
        const { token, audience } = await idp.exchangeCode(code, redirectUri(request), verifier);
        const who = await idp.verify(token, audience);
        await authenticator.readyForSessions();
        setSession(request, reply, { username: who.username, groups: who.groups, provider: idp.kind });
        return reply.redirect('/', 302);
      } catch (err) {
        request.log.warn({ err: (err as Error).message }, 'identity provider login failed');
        return back(err instanceof SwitchboardError ? String(err.detail) : 'Login with the identity provider failed');
      }
    },
  );
}
