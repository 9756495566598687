import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { badGateway, conflict, isSwitchboardError, notFound } from '../../../core/errors.ts';
import {
  CodeSession,
  CreateCodeSessionRequest,
  ExecuteRequest,
  ExecuteResult,
  History,
  type CodeInterpreterProvider,
} from '../../../core/primitives/code-interpreter.ts';
import { requireCapability } from '../capability.ts';
import { ownership } from '../ownership.ts';
import files from './files.ts';
import { existingSession, requireLanguage } from './sessions.ts';

const tags = ['code_interpreter'];
const SessionParams = Type.Object({ session_id: Type.String({ minLength: 1 }) });

/** /api/v1/code-interpreter: sessions, execute, history, files. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const providerFor = (headers: Record<string, string | string[] | undefined>) => {
    const p = app.sb.providers.resolve<CodeInterpreterProvider>('code_interpreter', headers);
    requireCapability(p, 'sessions', 'code interpreter sessions');
    return p;
  };

  app.post(
    '/sessions',
    {
      schema: {
        tags,
        summary: 'Start a code interpreter session',
        body: CreateCodeSessionRequest,
        response: { 201: CodeSession },
      },
      preValidation: async (request) => {
        request.body ??= {} as typeof request.body;
      },
    },
    async (request, reply) => {
      const p = providerFor(request.headers);
      const req = request.body;
      // A provider that executes some languages refuses sessions in others up front.
      if (p.capabilities.languages.length > 0) requireLanguage(p, req.language);
      if (req.session_id && (await p.getSession(req.session_id))) {
        throw conflict(
          'SB_ERR_CODE_SESSION_EXISTS',
          `Code interpreter session '${req.session_id}' already exists; omit session_id to get a generated one`,
        );
      }
      const session = await p.createSession(req);
      const { ledger, who } = ownership(request);
      await ledger.record('code_session', p.name, session.session_id, who, () => p.deleteSession(session.session_id));
      return reply.code(201).send(session);
    },
  );

  app.get(
    '/sessions',
    {
      schema: {
        tags,
        summary: "List code interpreter sessions (the caller's own; admins see all)",
        response: { 200: Type.Object({ sessions: Type.Array(CodeSession) }) },
      },
    },
    async (request) => {
      const p = providerFor(request.headers);
      const { ledger, who } = ownership(request);
      return {
        sessions: await ledger.visible('code_session', p.name, await p.listSessions(), (s) => s.session_id, who),
      };
    },
  );

  app.get(
    '/sessions/:session_id',
    { schema: { tags, summary: 'One session', params: SessionParams, response: { 200: CodeSession } } },
    async (request) => existingSession(request, providerFor(request.headers), request.params.session_id),
  );

  app.delete(
    '/sessions/:session_id',
    { schema: { tags, summary: 'Stop a session', params: SessionParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const p = providerFor(request.headers);
      const { session_id } = request.params;
      await existingSession(request, p, session_id, true);
      if (!(await p.deleteSession(session_id)))
        throw notFound('SB_ERR_CODE_SESSION_NOT_FOUND', `Code interpreter session '${session_id}' not found`);
      await ownership(request).ledger.forget('code_session', p.name, session_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/sessions/:session_id/execute',
    {
      schema: {
        tags,
        summary: 'Execute code in the session',
        params: SessionParams,
        body: ExecuteRequest,
        response: { 200: ExecuteResult },
      },
    },
    async (request) => {
      const p = providerFor(request.headers);
      const session = await existingSession(request, p, request.params.session_id);
      const language = request.body.language ?? session.language;
      requireLanguage(p, language);
      try {
        return await p.execute(session.session_id, request.body.code, language, {
          timeoutSeconds: request.body.timeout_seconds,
        });
      } catch (err) {
        // Code that fails is a result (exit_code, error); a throw means the sandbox itself failed.
        if (isSwitchboardError(err)) throw err;
        throw badGateway(
          'SB_ERR_CODE_BACKEND_FAILED',
          `The code interpreter provider '${p.name}' failed to run the code: ${err instanceof Error ? err.message : String(err)}`,
          err,
        );
      }
    },
  );

  app.get(
    '/sessions/:session_id/history',
    {
      schema: {
        tags,
        summary: 'Executions of the session, oldest first',
        params: SessionParams,
        querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }),
        response: { 200: History },
      },
    },
    async (request) => {
      const p = providerFor(request.headers);
      const { session_id } = await existingSession(request, p, request.params.session_id);
      return { session_id, entries: await p.history(session_id, request.query.limit) };
    },
  );

  await app.register(files);
};

export default routes;
