import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { forbidden, notFound } from '../../../core/errors.ts';
import type { Principal } from '../../../core/primitives/auth.ts';
import type { AgentDeps } from './deps.ts';
import type { SessionEntry } from './runtime/sessions.ts';
import {
  CancelResponse,
  CleanupQuery,
  CleanupResponse,
  Deleted,
  EventStream,
  HistoryResponse,
  NameParams,
  SessionList,
  SessionParams,
  StatusResponse,
} from './schemas.ts';

const tags = ['agents'];

/** Sessions of an agent: list, history, status, reconnect, cancel, delete, cleanup. */
export function sessionRoutes(fastify: FastifyInstance, { runtime, runs, sse: streams }: AgentDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const mine = (s: SessionEntry, who: Principal) => who.is_admin || s.actor_id === who.id;

  /** The session, checked against the caller; 404 when neither history nor a run exists. */
  const session = async (name: string, sessionId: string, who: Principal) => {
    const spec = await runtime.specs.get(name, who);
    const entry = await runtime.sessions.get(spec.name, sessionId);
    const run = await runs.events.getRun(spec.name, sessionId);
    if (!entry && !run)
      throw notFound('SB_ERR_AGENT_SESSION_NOT_FOUND', `Session '${sessionId}' of agent '${name}' not found`);
    const actor = entry?.actor_id ?? run!.actor_id;
    if (!who.is_admin && actor !== who.id)
      throw forbidden(
        'SB_ERR_AGENT_SESSION_FORBIDDEN',
        `Session '${sessionId}' of agent '${name}' belongs to another user`,
      );
    return { spec, entry, run };
  };

  const remove = async (entry: SessionEntry) => {
    await runtime.history.delete(entry, runtime.historyMemory(entry));
    await runtime.sessions.delete(entry.agent_name, entry.session_id);
    await runs.events.deleteRun(entry.agent_name, entry.session_id);
  };

  app.get(
    '/:name/sessions',
    {
      schema: {
        tags,
        summary: "The caller's sessions with this agent, most recent first",
        params: NameParams,
        response: { 200: SessionList },
      },
    },
    async (request) => {
      const who = request.principal!;
      const spec = await runtime.specs.get(request.params.name, who);
      const entries = (await runtime.sessions.list(spec.name)).filter((s) => mine(s, who));
      const sessions = await Promise.all(
        entries.map(async ({ history: _h, ...s }) => ({
          ...s,
          status: (await runs.status(spec.name, s.session_id)).status,
        })),
      );
      return { agent_name: spec.name, sessions };
    },
  );

  app.post(
    '/:name/sessions/cleanup',
    {
      schema: {
        tags,
        summary: 'Delete older sessions, keeping the `keep` most recently active',
        params: NameParams,
        querystring: CleanupQuery,
        response: { 200: CleanupResponse },
      },
    },
    async (request) => {
      const who = request.principal!;
      const { keep } = request.query;
      const spec = await runtime.specs.get(request.params.name, who);
      const entries = (await runtime.sessions.list(spec.name)).filter((s) => mine(s, who));
      const deleted: string[] = [];
      for (const entry of entries.slice(keep)) {
        if ((await runs.status(spec.name, entry.session_id)).status === 'running') continue;
        await remove(entry);
        deleted.push(entry.session_id);
      }
      return {
        agent_name: spec.name,
        deleted,
        kept: entries.map((e) => e.session_id).filter((id) => !deleted.includes(id)),
      };
    },
  );

  app.get(
    '/:name/sessions/:session_id',
    {
      schema: {
        tags,
        summary: 'Conversation history of a session',
        params: SessionParams,
        response: { 200: HistoryResponse },
      },
    },
    async (request) => {
      const { name, session_id } = request.params;
      const { spec, entry } = await session(name, session_id, request.principal!);
      const messages = entry ? await runtime.history.load(entry, runtime.historyMemory(entry)) : [];
      return { agent_name: spec.name, session_id, messages };
    },
  );

  app.get(
    '/:name/sessions/:session_id/status',
    { schema: { tags, summary: 'running or idle', params: SessionParams, response: { 200: StatusResponse } } },
    async (request) => {
      const { name, session_id } = request.params;
      const { spec } = await session(name, session_id, request.principal!);
      return { agent_name: spec.name, session_id, ...(await runs.status(spec.name, session_id)) };
    },
  );

  app.get(
    '/:name/sessions/:session_id/stream',
    {
      schema: {
        tags,
        summary:
          "Reconnect to a session's run: replays stored events, then follows the run while it is active (waits up to 3 minutes for a resumed run)",
        params: SessionParams,
        response: { 200: EventStream },
      },
    },
    async (request, reply) => {
      const { name, session_id } = request.params;
      const { spec, run } = await session(name, session_id, request.principal!);
      if (!run)
        throw notFound(
          'SB_ERR_AGENT_NO_RUN',
          `Session '${session_id}' of agent '${name}' has no streamed run to reconnect to`,
        );
      const sse = streams.start(request, reply);
      for await (const ev of runs.follow(spec.name, session_id, sse.closed)) sse.send(ev);
      sse.end();
    },
  );

  app.delete(
    '/:name/sessions/:session_id/run',
    {
      schema: {
        tags,
        summary: 'Cancel the active run of a session',
        params: SessionParams,
        response: { 200: CancelResponse },
      },
    },
    async (request) => {
      const { name, session_id } = request.params;
      const spec = await runtime.specs.get(name, request.principal!);
      const run = await runs.events.getRun(spec.name, session_id);
      if (run && !request.principal!.is_admin && run.actor_id !== request.principal!.id) {
        throw forbidden(
          'SB_ERR_AGENT_SESSION_FORBIDDEN',
          `Session '${session_id}' of agent '${name}' belongs to another user`,
        );
      }
      const run_id = await runs.cancel(spec.name, session_id);
      return { agent_name: spec.name, session_id, run_id, status: 'cancelled' as const };
    },
  );

  app.delete(
    '/:name/sessions/:session_id',
    {
      schema: { tags, summary: 'Delete a session and its history', params: SessionParams, response: { 200: Deleted } },
    },
    async (request) => {
      const { name, session_id } = request.params;
      const { spec, entry } = await session(name, session_id, request.principal!);
      if ((await runs.status(spec.name, session_id)).status === 'running') await runs.cancel(spec.name, session_id);
      if (entry) await remove(entry);
      else await runs.events.deleteRun(spec.name, session_id);
      return { deleted: true, session_id };
    },
  );
}
