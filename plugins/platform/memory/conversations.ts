import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import type { MetadataFilter } from '../../../core/metadata-denylist.ts';
import {
  Branch,
  CreateBranchRequest,
  CreateEventRequest,
  EventMessage,
  MemoryEvent,
  MemorySession,
  type MemoryProvider,
} from '../../../core/primitives/memory.ts';
import { requireCapability, requireMethod } from '../capability.ts';
import { checkActor } from './access.ts';
import { branchBody } from './reference-shapes.ts';

const tags = ['memory'];
const Session = Type.Object({ actor_id: Type.String({ minLength: 1 }), session_id: Type.String({ minLength: 1 }) });
const EventParams = Type.Object({
  actor_id: Type.String({ minLength: 1 }),
  session_id: Type.String({ minLength: 1 }),
  event_id: Type.String({ minLength: 1 }),
});
const Actor = Type.Object({ actor_id: Type.String({ minLength: 1 }) });

/** Conversation memory: events, last-K turns, actors and sessions, branches (spec 4.8). */
export function conversationRoutes(fastify: FastifyInstance, strip: MetadataFilter): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const mem = (request: { headers: Record<string, string | string[] | undefined> }) => {
    const p = app.sb.providers.resolve<MemoryProvider>('memory', request.headers);
    requireCapability(p, 'events', 'conversation events');
    return p;
  };
  const view = strip.view<MemoryEvent>('memory');
  const guard = (request: Parameters<typeof checkActor>[0] & { params: { actor_id: string } }) =>
    checkActor(request, request.params.actor_id);

  app.post(
    '/sessions/:actor_id/:session_id/events',
    {
      schema: {
        tags,
        summary: 'Create an event',
        params: Session,
        body: CreateEventRequest,
        response: { 201: MemoryEvent },
      },
    },
    async (request, reply) => {
      guard(request);
      const { actor_id, session_id } = request.params;
      return reply.status(201).send(view(await mem(request).createEvent(actor_id, session_id, request.body)));
    },
  );

  app.get(
    '/sessions/:actor_id/:session_id/events',
    {
      schema: {
        tags,
        summary: 'List events, oldest first',
        params: Session,
        querystring: Type.Object({
          branch: Type.Optional(Type.String()),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
        }),
        response: { 200: Type.Object({ events: Type.Array(MemoryEvent) }) },
      },
    },
    async (request) => {
      guard(request);
      const { actor_id, session_id } = request.params;
      const q = request.query;
      if (q.branch !== undefined) requireCapability(mem(request), 'branches', 'branches');
      return { events: (await mem(request).listEvents(actor_id, session_id, q)).map(view) };
    },
  );

  app.get(
    '/sessions/:actor_id/:session_id/events/:event_id',
    { schema: { tags, summary: 'Get an event', params: EventParams, response: { 200: MemoryEvent } } },
    async (request) => {
      guard(request);
      const { actor_id, session_id, event_id } = request.params;
      const e = await mem(request).getEvent(actor_id, session_id, event_id);
      if (!e)
        throw notFound(
          'SB_ERR_MEMORY_EVENT_NOT_FOUND',
          `No event ${event_id} in session ${session_id} of actor ${actor_id}`,
        );
      return view(e);
    },
  );

  app.delete(
    '/sessions/:actor_id/:session_id/events/:event_id',
    { schema: { tags, summary: 'Delete an event', params: EventParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      guard(request);
      const { actor_id, session_id, event_id } = request.params;
      if (!(await mem(request).deleteEvent(actor_id, session_id, event_id)))
        throw notFound(
          'SB_ERR_MEMORY_EVENT_NOT_FOUND',
          `No event ${event_id} in session ${session_id} of actor ${actor_id}`,
        );
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/sessions/:actor_id/:session_id/turns',
    {
      schema: {
        tags,
        summary: 'The last K turns, oldest first',
        params: Session,
        querystring: Type.Object({
          k: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
          branch: Type.Optional(Type.String()),
        }),
        response: { 200: Type.Object({ turns: Type.Array(Type.Object({ messages: Type.Array(EventMessage) })) }) },
      },
    },
    async (request) => {
      guard(request);
      const { actor_id, session_id } = request.params;
      const { k, branch } = request.query;
      return { turns: await mem(request).turns(actor_id, session_id, k, { branch }) };
    },
  );

  app.get(
    '/actors',
    {
      schema: {
        tags,
        summary: 'Actors with conversation memory',
        response: { 200: Type.Object({ actors: Type.Array(Type.Object({ actor_id: Type.String() })) }) },
      },
    },
    async (request) => {
      const p = request.principal;
      const all = await mem(request).actors();
      return { actors: all.filter((a) => !p || p.is_admin || a === p.id).map((actor_id) => ({ actor_id })) };
    },
  );

  app.get(
    '/actors/:actor_id/sessions',
    {
      schema: {
        tags,
        summary: 'Sessions of an actor, most recent first',
        params: Actor,
        response: { 200: Type.Object({ sessions: Type.Array(MemorySession) }) },
      },
    },
    async (request) => {
      guard(request);
      return { sessions: await mem(request).sessions(request.params.actor_id) };
    },
  );

  app.post(
    '/sessions/:actor_id/:session_id/branches',
    {
      schema: {
        tags,
        summary: "Fork the conversation from an event (name or the reference's branch_name)",
        params: Session,
        body: CreateBranchRequest,
        response: { 201: Branch },
      },
      preValidation: branchBody,
    },
    async (request, reply) => {
      guard(request);
      const p = mem(request);
      requireCapability(p, 'branches', 'branches');
      const { actor_id, session_id } = request.params;
      return reply
        .status(201)
        .send(await requireMethod(p, 'createBranch', 'branches')(actor_id, session_id, request.body));
    },
  );

  app.get(
    '/sessions/:actor_id/:session_id/branches',
    {
      schema: {
        tags,
        summary: 'Branches of a conversation',
        params: Session,
        response: { 200: Type.Object({ branches: Type.Array(Branch) }) },
      },
    },
    async (request) => {
      guard(request);
      const p = mem(request);
      requireCapability(p, 'branches', 'branches');
      const { actor_id, session_id } = request.params;
      return { branches: await requireMethod(p, 'listBranches', 'branches')(actor_id, session_id) };
    },
  );
}
