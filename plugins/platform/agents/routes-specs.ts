import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { isPrimitive } from '../../../core/primitives.ts';
import type { MemoryProvider } from '../../../core/primitives/memory.ts';
import { callerOf, type AgentDeps } from './deps.ts';
import { catalogListing } from './runtime/catalog.ts';
import {
  agentNamespace,
  assertNamespaceAccess,
  memoryEnabled,
  sharedNamespaces,
} from './runtime/tools/memory-namespaces.ts';
import {
  AgentList,
  AgentMemoryResponse,
  AgentSpec,
  AgentToolList,
  CreateAgentRequest,
  Deleted,
  NameParams,
  ToolCatalogResponse,
  UpdateAgentRequest,
} from './schemas.ts';

const tags = ['agents'];

/** Agent spec CRUD and introspection: tool catalog, an agent's tools and its memory. */
export function specRoutes(fastify: FastifyInstance, { runtime }: AgentDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // An override must name a provider the caller could pick by header: unknown -> 400, locked -> 403.
  const checkOverrides = (overrides: Record<string, string> | undefined) => {
    for (const [primitive, name] of Object.entries(overrides ?? {}))
      if (isPrimitive(primitive)) app.sb.providers.resolve(primitive, {}, name);
  };

  app.post(
    '/',
    { schema: { tags, summary: 'Create an agent', body: CreateAgentRequest, response: { 201: AgentSpec } } },
    async (request, reply) => {
      const body = request.body;
      checkOverrides(body.provider_overrides);
      const spec = await runtime.specs.create(body, request.principal!);
      return reply.status(201).send(spec);
    },
  );

  app.get(
    '/',
    { schema: { tags, summary: 'Agents the caller owns or that are shared with them', response: { 200: AgentList } } },
    async (request) => {
      const agents = await runtime.specs.list(request.principal!);
      return { agents, total: agents.length };
    },
  );

  app.get(
    '/tool-catalog',
    { schema: { tags, summary: 'Tools agents can be given, by primitive', response: { 200: ToolCatalogResponse } } },
    async (request) => ({
      primitives: await catalogListing({ principal: request.principal!, specs: runtime.specs }),
    }),
  );

  app.get(
    '/:name',
    { schema: { tags, summary: 'One agent spec', params: NameParams, response: { 200: AgentSpec } } },
    async (request) => runtime.specs.get(request.params.name, request.principal!),
  );

  app.put(
    '/:name',
    {
      schema: {
        tags,
        summary: 'Update an agent (partial)',
        params: NameParams,
        body: UpdateAgentRequest,
        response: { 200: AgentSpec },
      },
    },
    async (request) => {
      const patch = request.body;
      checkOverrides(patch.provider_overrides);
      return runtime.specs.update(request.params.name, patch, request.principal!);
    },
  );

  app.delete(
    '/:name',
    { schema: { tags, summary: 'Delete an agent', params: NameParams, response: { 200: Deleted } } },
    async (request) => {
      const { name } = request.params;
      await runtime.specs.delete(name, request.principal!);
      // `status` is the reference's answer field (its client reads it); `deleted` is ours.
      return { status: 'deleted' as const, deleted: true, name };
    },
  );

  app.get(
    '/:name/tools',
    {
      schema: {
        tags,
        summary: "The agent's tools with the primitive and provider behind each",
        params: NameParams,
        response: { 200: AgentToolList },
      },
    },
    async (request) => {
      const spec = await runtime.specs.get(request.params.name, request.principal!);
      const tools = await runtime.tools(spec, callerOf(request));
      return {
        agent_name: spec.name,
        tools: tools.map(({ name, description, primitive, provider }) => ({ name, description, primitive, provider })),
      };
    },
  );

  app.get(
    '/:name/memory',
    {
      schema: {
        tags,
        summary: "The agent's memory namespaces and their contents",
        params: NameParams,
        response: { 200: AgentMemoryResponse },
      },
    },
    async (request) => {
      const spec = await runtime.specs.get(request.params.name, request.principal!);
      const shared = sharedNamespaces(spec);
      if (!memoryEnabled(spec) && shared.length === 0)
        return { agent_name: spec.name, memory_enabled: false, provider: null, stores: [] };
      const mem = runtime.resolve<MemoryProvider>(spec, callerOf(request), 'memory');
      const spaces = [
        ...(memoryEnabled(spec) ? [{ namespace: agentNamespace(spec, request.principal!.id), shared: false }] : []),
        ...shared.map((namespace) => ({ namespace, shared: true })),
      ];
      const who = request.principal!;
      const visible = spaces.filter((s) => {
        try {
          assertNamespaceAccess(s.namespace, who);
          return true;
        } catch {
          return false; // another user's private namespace: not shown
        }
      });
      const stores = await Promise.all(
        visible.map(async (s) => {
          const page = await mem.list(s.namespace, { limit: 100, offset: 0 });
          const records = page.records.map((r) => ({
            ...r,
            metadata: runtime.stripMetadata('memory', r.metadata ?? {}),
          }));
          return { ...s, total: page.total, records };
        }),
      );
      return { agent_name: spec.name, memory_enabled: memoryEnabled(spec), provider: mem.name, stores };
    },
  );
}
