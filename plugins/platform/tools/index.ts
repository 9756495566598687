import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { badGateway, conflict, isSwitchboardError, notFound } from '../../../core/errors.ts';
import type { FastifyRequest } from 'fastify';
import {
  InvokeRequest,
  InvokeResult,
  Tool,
  ToolList,
  ToolSearchQuery,
  ToolSearchResult,
  type ToolCaller,
  type ToolsProvider,
} from '../../../core/primitives/tools.ts';
import { requireCapability } from '../capability.ts';
import { ownership } from '../ownership.ts';
import { checkInputSchema, checkParams } from './params.ts';
import servers from './servers.ts';

const tags = ['tools'];

/** The reference names a tool's JSON Schema `parameters`; taken as `input_schema` when that is not given. */
async function parametersAsInputSchema(request: { body: unknown }): Promise<void> {
  // Cast, not typed: a preValidation hook sees the body before the schema has judged it; the checks below guard it.
  const body = request.body as Record<string, unknown> | null;
  if (
    body &&
    typeof body === 'object' &&
    body.input_schema == null &&
    body.parameters &&
    typeof body.parameters === 'object'
  ) {
    body.input_schema = body.parameters;
  }
}
const NameParams = Type.Object({ name: Type.String({ minLength: 1 }) });

/** /api/v1/tools (spec 4.4). */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const toolsFor = (headers: Record<string, string | string[] | undefined>) =>
    app.sb.providers.resolve<ToolsProvider>('tools', headers);

  // Backends with access rules of their own (the registry) judge this caller.
  const callerOf = (request: FastifyRequest): ToolCaller => ({
    principal: request.principal,
    headers: request.headers,
  });

  async function existing(p: ToolsProvider, name: string, caller?: ToolCaller): Promise<Tool> {
    const tool = await p.get(name, caller);
    if (!tool) throw notFound('SB_ERR_TOOLS_NOT_FOUND', `Tool '${name}' not found`);
    return tool;
  }

  app.post(
    '/',
    {
      schema: { tags, summary: 'Register a tool', body: Tool, response: { 201: Tool } },
      preValidation: parametersAsInputSchema,
    },
    async (request, reply) => {
      const p = toolsFor(request.headers);
      requireCapability(p, 'register', 'registering tools');
      const tool = request.body;
      checkInputSchema(tool.name, tool.input_schema);
      if (await p.get(tool.name, callerOf(request)))
        throw conflict(
          'SB_ERR_TOOLS_EXISTS',
          `Tool '${tool.name}' is already registered; delete it first to replace it`,
        );
      const registered = await p.register(tool);
      const { ledger, who } = ownership(request);
      await ledger.record('tool', p.name, registered.name, who, () => p.delete(registered.name));
      return reply.code(201).send(registered);
    },
  );

  app.get('/', { schema: { tags, summary: 'List tools', response: { 200: ToolList } } }, async (request) => {
    const p = toolsFor(request.headers);
    requireCapability(p, 'search', 'listing tools');
    const tools = await p.list(callerOf(request));
    return { tools, total: tools.length };
  });

  app.get(
    '/search',
    { schema: { tags, summary: 'Search tools', querystring: ToolSearchQuery, response: { 200: ToolSearchResult } } },
    async (request) => {
      const p = toolsFor(request.headers);
      requireCapability(p, 'search', 'searching tools');
      const { query, max_results } = request.query;
      const matches = await p.search(query, max_results, callerOf(request));
      const tools = matches.map(({ tool, score }) => ({ ...tool, parameters: tool.input_schema, score }));
      return { query, matches, tools };
    },
  );

  await app.register(servers);

  app.get(
    '/:name',
    { schema: { tags, summary: 'One tool', params: NameParams, response: { 200: Tool } } },
    async (request) => {
      const p = toolsFor(request.headers);
      requireCapability(p, 'search', 'reading tools');
      return existing(p, request.params.name, callerOf(request));
    },
  );

  app.delete(
    '/:name',
    { schema: { tags, summary: 'Delete a tool', params: NameParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const p = toolsFor(request.headers);
      requireCapability(p, 'register', 'deleting tools');
      const { name } = request.params;
      await existing(p, name, callerOf(request));
      const { ledger, who } = ownership(request);
      await ledger.assertChange('tool', p.name, name, who);
      if (!(await p.delete(name))) throw notFound('SB_ERR_TOOLS_NOT_FOUND', `Tool '${name}' not found`);
      await ledger.forget('tool', p.name, name);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:name/invoke',
    {
      schema: {
        tags,
        summary: 'Invoke a tool',
        params: NameParams,
        body: InvokeRequest,
        response: { 200: InvokeResult },
      },
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const p = toolsFor(request.headers);
      const name = request.params.name;
      // Invalid params are the caller's to fix whatever the provider, so they are checked before the capability.
      const caller = callerOf(request);
      const tool = await existing(p, name, caller);
      const params = request.body.params ?? {};
      checkParams(name, tool.input_schema, params);
      requireCapability(p, 'invoke', 'invoking tools');
      try {
        return await p.invoke(name, params, caller);
      } catch (err) {
        if (isSwitchboardError(err)) throw err;
        throw badGateway(
          'SB_ERR_TOOLS_EXECUTION_FAILED',
          `Tool '${name}' failed: ${err instanceof Error ? err.message : String(err)}`,
          err,
        );
      }
    },
  );
};

export default routes;
