import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import {
  CreateResourceRequest,
  CreateStrategyRequest,
  MemoryResource,
  Strategy,
  type MemoryProvider,
} from '../../../core/primitives/memory.ts';
import { requireCapability, requireMethod } from '../capability.ts';
import { addStrategyBody, createResourceBody } from './reference-shapes.ts';
import { ownership } from '../ownership.ts';

const tags = ['memory'];
const Id = Type.Object({ memory_id: Type.String({ minLength: 1 }) });
const IdStrategy = Type.Object({
  memory_id: Type.String({ minLength: 1 }),
  strategy_id: Type.String({ minLength: 1 }),
});

/** Memory resources and their strategies (spec 4.8); 501 from providers without them. */
export function resourceRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const mem = (request: { headers: Record<string, string | string[] | undefined> }) => {
    const p = app.sb.providers.resolve<MemoryProvider>('memory', request.headers);
    requireCapability(p, 'resources', 'memory resources');
    return p;
  };
  const missing = (id: string) => notFound('SB_ERR_MEMORY_RESOURCE_NOT_FOUND', `No memory resource ${id}`);

  /** 404 when absent, 403 unless the caller created it or is an admin (plugins/platform/ownership.ts). */
  const changeable = async (request: FastifyRequest, p: MemoryProvider, id: string) => {
    if (!(await requireMethod(p, 'getResource', 'memory resources')(id))) throw missing(id);
    const { ledger, who } = ownership(request);
    await ledger.assertChange('memory_resource', p.name, id, who);
  };

  app.post(
    '/resources',
    {
      schema: {
        tags,
        summary: 'Create a memory resource',
        body: CreateResourceRequest,
        response: { 201: MemoryResource },
      },
      preValidation: createResourceBody,
    },
    async (request, reply) => {
      const p = mem(request);
      const created = await requireMethod(p, 'createResource', 'memory resources')(request.body);
      const { ledger, who } = ownership(request);
      await ledger.record('memory_resource', p.name, created.memory_id, who, () =>
        requireMethod(p, 'deleteResource', 'memory resources')(created.memory_id),
      );
      return reply.status(201).send(created);
    },
  );
  app.get(
    '/resources',
    {
      schema: {
        tags,
        summary: 'List memory resources',
        response: { 200: Type.Object({ resources: Type.Array(MemoryResource) }) },
      },
    },
    async (request) => {
      const p = mem(request);
      return { resources: await requireMethod(p, 'listResources', 'memory resources')() };
    },
  );
  app.get(
    '/resources/:memory_id',
    { schema: { tags, summary: 'Get a memory resource', params: Id, response: { 200: MemoryResource } } },
    async (request) => {
      const { memory_id } = request.params;
      const r = await requireMethod(mem(request), 'getResource', 'memory resources')(memory_id);
      if (!r) throw missing(memory_id);
      return r;
    },
  );
  app.delete(
    '/resources/:memory_id',
    { schema: { tags, summary: 'Delete a memory resource', params: Id, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const { memory_id } = request.params;
      const p = mem(request);
      await changeable(request, p, memory_id);
      if (!(await requireMethod(p, 'deleteResource', 'memory resources')(memory_id))) throw missing(memory_id);
      await ownership(request).ledger.forget('memory_resource', p.name, memory_id);
      return reply.status(204).send(null);
    },
  );
  app.get(
    '/resources/:memory_id/strategies',
    {
      schema: {
        tags,
        summary: 'List strategies',
        params: Id,
        response: { 200: Type.Object({ strategies: Type.Array(Strategy) }) },
      },
    },
    async (request) => {
      const { memory_id } = request.params;
      return { strategies: await requireMethod(mem(request), 'listStrategies', 'memory strategies')(memory_id) };
    },
  );
  app.post(
    '/resources/:memory_id/strategies',
    {
      schema: {
        tags,
        summary: 'Add a strategy (also the reference\'s {"strategy": {...}} wrapper)',
        params: Id,
        body: CreateStrategyRequest,
        response: { 201: Strategy },
      },
      preValidation: addStrategyBody,
    },
    async (request, reply) => {
      const { memory_id } = request.params;
      const p = mem(request);
      await changeable(request, p, memory_id);
      return reply
        .status(201)
        .send(await requireMethod(p, 'addStrategy', 'memory strategies')(memory_id, request.body));
    },
  );
  app.delete(
    '/resources/:memory_id/strategies/:strategy_id',
    { schema: { tags, summary: 'Delete a strategy', params: IdStrategy, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const { memory_id, strategy_id } = request.params;
      const p = mem(request);
      await changeable(request, p, memory_id);
      if (!(await requireMethod(p, 'deleteStrategy', 'memory strategies')(memory_id, strategy_id))) {
        throw notFound(
          'SB_ERR_MEMORY_STRATEGY_NOT_FOUND',
          `No strategy ${strategy_id} in memory resource ${memory_id}`,
        );
      }
      return reply.status(204).send(null);
    },
  );
}
