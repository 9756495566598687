import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { conflict } from '../../../core/errors.ts';
import { BrowserSession, LiveView, StartSessionRequest } from '../../../core/primitives/browser.ts';
import { requireCapability } from '../capability.ts';
import actions from './actions.ts';
import type { LiveViewSigner } from './live-view.ts';
import { browserFor, ownedSession, principalOf } from './sessions.ts';

const tags = ['browser'];
const SessionParams = Type.Object({ session_id: Type.String({ minLength: 1 }) });
const SessionList = Type.Object({ sessions: Type.Array(BrowserSession) });

/**
 * /api/v1/browser: sessions scoped to their owner; admins see all (spec 4.3, 5.4). `signer` signs live-view
 * links; the viewer routes that check them live outside the auth scope (live-view.ts).
 */
const routes: FastifyPluginAsyncTypebox<{ signer: LiveViewSigner }> = async (app, { signer }) => {
  app.post(
    '/sessions',
    {
      schema: {
        tags,
        summary: 'Start a browser session',
        body: StartSessionRequest,
        response: { 201: BrowserSession },
      },
      // Every field of the start request is optional, so an empty POST is a valid request.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const provider = browserFor(app.sb, request);
      requireCapability(provider, 'sessions', 'browser sessions');
      const body = request.body;
      if (body.session_id && (await provider.getSession(body.session_id))) {
        throw conflict(
          'SB_ERR_BROWSER_SESSION_EXISTS',
          `Browser session '${body.session_id}' already exists; omit session_id to get a generated one`,
        );
      }
      const session = await provider.startSession(principalOf(request).id, body);
      return reply.code(201).send(session);
    },
  );

  app.get(
    '/sessions',
    {
      schema: {
        tags,
        summary: 'List browser sessions (non-admins see only their own)',
        response: { 200: SessionList },
      },
    },
    async (request) => {
      const provider = browserFor(app.sb, request);
      requireCapability(provider, 'sessions', 'browser sessions');
      const p = principalOf(request);
      return { sessions: await provider.listSessions(p.is_admin ? undefined : p.id) };
    },
  );

  app.get(
    '/sessions/:session_id',
    { schema: { tags, summary: 'Browser session info', params: SessionParams, response: { 200: BrowserSession } } },
    async (request) => {
      const provider = browserFor(app.sb, request);
      requireCapability(provider, 'sessions', 'browser sessions');
      return ownedSession(provider, request.params.session_id, principalOf(request), 404);
    },
  );

  app.delete(
    '/sessions/:session_id',
    { schema: { tags, summary: 'Stop a browser session', params: SessionParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const provider = browserFor(app.sb, request);
      requireCapability(provider, 'sessions', 'browser sessions');
      await ownedSession(provider, request.params.session_id, principalOf(request), 404);
      await provider.stopSession(request.params.session_id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/sessions/:session_id/live-view',
    {
      schema: {
        tags,
        summary: 'A live view URL of the session',
        params: SessionParams,
        querystring: Type.Object({
          expires: Type.Integer({
            minimum: 1,
            maximum: 3600,
            default: 300,
            description: 'Seconds the URL stays valid',
          }),
        }),
        response: { 200: LiveView },
      },
    },
    async (request) => {
      const provider = browserFor(app.sb, request);
      const { session_id } = request.params;
      await ownedSession(provider, session_id, principalOf(request), 404);
      requireCapability(provider, 'live_view', 'live view');
      const exp = Math.floor(Date.now() / 1000) + request.query.expires;
      return {
        session_id,
        url: `${request.protocol}://${request.host}${signer.path(provider.name, session_id, exp)}`,
        expires: request.query.expires,
        expires_at: new Date(exp * 1000).toISOString(),
      };
    },
  );

  await app.register(actions);
};

export default routes;
