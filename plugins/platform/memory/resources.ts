import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import { CreateResourceRequest, CreateStrategyRequest, MemoryResource, Strategy, type MemoryProvider } from '../../../core/primitives/memory.ts';
import { requireCapability, requireMethod } from '../capability.ts';
import { addStrategyBody, createResourceBody } from './reference-shapes.ts';

const tags = ['memory'];
const Id = Type.Object({ memory_id: Type.String({ minLength: 1 }) });
const IdStrategy = Type.Object({ memory_id: Type.String({ minLength: 1 }), strategy_id: Type.String({ minLength: 1 }) });

/** Memory resources and their strategies (spec 4.8); 501 from providers without them. */
export function resourceRoutes(app: FastifyInstance): void {
  const mem = (request: { headers: Record<string, string | string[] | undefined> }) => {
    const p = app.sb.providers.resolve<MemoryProvider>('memory', request.headers);
    requireCapability(p, 'resources', 'memory resources');
    return p;
  };
  const missing = (id: string) => notFound('SB_ERR_MEMORY_RESOURCE_NOT_FOUND', `No memory resource ${id}`);

  app.post('/resources', { schema: { tags, summary: 'Create a memory resource', body: CreateResourceRequest, response: { 201: MemoryResource } }, preValidation: createResourceBody }, async (request, reply) => {
    const p = mem(request);
    return reply.status(201).send(await requireMethod(p, 'createResource', 'memory resources')(request.body as CreateResourceRequest));
  });
  app.get('/resources', { schema: { tags, summary: 'List memory resources', response: { 200: Type.Object({ resources: Type.Array(MemoryResource) }) } } }, async (request) => {
    const p = mem(request);
    return { resources: await requireMethod(p, 'listResources', 'memory resources')() };
  });
  app.get('/resources/:memory_id', { schema: { tags, summary: 'Get a memory resource', params: Id, response: { 200: MemoryResource } } }, async (request) => {
    const { memory_id } = request.params as { memory_id: string };
    const r = await requireMethod(mem(request), 'getResource', 'memory resources')(memory_id);
    if (!r) throw missing(memory_id);
    return r;
  });
  app.delete('/resources/:memory_id', { schema: { tags, summary: 'Delete a memory resource', params: Id, response: { 204: Type.Null() } } }, async (request, reply) => {
    const { memory_id } = request.params as { memory_id: string };
    if (!(await requireMethod(mem(request), 'deleteResource', 'memory resources')(memory_id))) throw missing(memory_id);
    return reply.status(204).send();
  });
  app.get('/resources/:memory_id/strategies', { schema: { tags, summary: 'List strategies', params: Id, response: { 200: Type.Object({ strategies: Type.Array(Strategy) }) } } }, async (request) => {
    const { memory_id } = request.params as { memory_id: string };
    return { strategies: await requireMethod(mem(request), 'listStrategies', 'memory strategies')(memory_id) };
  });
  app.post('/resources/:memory_id/strategies', { schema: { tags, summary: 'Add a strategy (also the reference\'s {"strategy": {...}} wrapper)', params: Id, body: CreateStrategyRequest, response: { 201: Strategy } }, preValidation: addStrategyBody }, async (request, reply) => {
    const { memory_id } = request.params as { memory_id: string };
    return reply.status(201).send(await requireMethod(mem(request), 'addStrategy', 'memory strategies')(memory_id, request.body as CreateStrategyRequest));
  });
  app.delete('/resources/:memory_id/strategies/:strategy_id', { schema: { tags, summary: 'Delete a strategy', params: IdStrategy, response: { 204: Type.Null() } } }, async (request, reply) => {
    const { memory_id, strategy_id } = request.params as { memory_id: string; strategy_id: string };
    if (!(await requireMethod(mem(request), 'deleteStrategy', 'memory strategies')(memory_id, strategy_id))) {
      throw notFound('SB_ERR_MEMORY_STRATEGY_NOT_FOUND', `No strategy ${strategy_id} in memory resource ${memory_id}`);
    }
    return reply.status(204).send();
  });
}
