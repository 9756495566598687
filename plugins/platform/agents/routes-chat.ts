import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { conflict } from '../../../core/errors.ts';
import { callerOf, type AgentDeps } from './deps.ts';
import type { ChatEvent } from './runtime/events.ts';
import { TERMINAL_EVENTS } from './runtime/events.ts';
import { ChatRequest, ChatResponse, EventStream, NameParams } from './schemas.ts';

const tags = ['agents'];

/** POST /{name}/chat and /{name}/chat/stream. */
export function chatRoutes(fastify: FastifyInstance, { runtime, runs, sse: streams }: AgentDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/:name/chat',
    {
      schema: {
        tags,
        summary: 'Chat with an agent (runs the tool loop)',
        params: NameParams,
        body: ChatRequest,
        response: { 200: ChatResponse },
      },
    },
    async (request) => {
      const body = request.body;
      const spec = await runtime.specs.get(request.params.name, request.principal!);
      const prepared = await runtime.prepare(spec, callerOf(request), body.session_id);
      if (body.session_id && (await runs.status(spec.name, body.session_id)).status === 'running') {
        throw conflict(
          'SB_ERR_AGENT_RUN_ACTIVE',
          `Session '${body.session_id}' of agent '${spec.name}' has a streamed run in progress; wait for it, reconnect to it or cancel it`,
        );
      }
      return runtime.chat(prepared, body.message);
    },
  );

  app.post(
    '/:name/chat/stream',
    {
      schema: {
        tags,
        summary:
          'Chat with an agent as a background run streamed as server-sent events; the run continues if the client disconnects',
        params: NameParams,
        body: ChatRequest,
        response: { 200: EventStream },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const spec = await runtime.specs.get(request.params.name, request.principal!);
      // Everything that can be refused (routing, access, a run already active) is refused before the stream opens.
      const prepared = await runtime.prepare(spec, callerOf(request), body.session_id);
      const buffered: ChatEvent[] = [];
      let sink: (ev: ChatEvent) => void = (ev) => buffered.push(ev);
      const subscriber = (ev: ChatEvent) => sink(ev);
      const ids = { agent: spec.name, session: prepared.session.session_id, actor: prepared.session.actor_id };
      await runs.start(ids, subscriber, (emit, signal) =>
        runtime.chat(prepared, body.message, { emit, signal, stream: true }),
      );
      const sse = streams.start(request, reply);
      sink = (ev) => {
        sse.send(ev);
        if (TERMINAL_EVENTS.has(ev.type)) sse.end();
      };
      for (const ev of buffered) sink(ev);
      sse.closed.addEventListener('abort', () => runs.unsubscribe(ids.agent, ids.session, subscriber), { once: true });
    },
  );
}
