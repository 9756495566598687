import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { conflict, notFound } from '../../../core/errors.ts';
import { McpServer, RegisterServerRequest, ServerList, type ToolsProvider } from '../../../core/primitives/tools.ts';
import { requireCapability } from '../capability.ts';

const tags = ['tools'];

/** MCP server management under /api/v1/tools/servers: 501 unless the provider has `servers`. */
const servers: FastifyPluginAsyncTypebox = async (app) => {
  const serversFor = (headers: Record<string, string | string[] | undefined>) => {
    const p = app.sb.providers.resolve<ToolsProvider>('tools', headers);
    requireCapability(p, 'servers', 'MCP server management');
    return p;
  };

  app.get(
    '/servers',
    { schema: { tags, summary: 'MCP servers with health', response: { 200: ServerList } } },
    async (request) => ({
      servers: await serversFor(request.headers).listServers({
        principal: request.principal,
        headers: request.headers,
      }),
    }),
  );

  app.post(
    '/servers',
    { schema: { tags, summary: 'Register an MCP server', body: RegisterServerRequest, response: { 201: McpServer } } },
    async (request, reply) => {
      const p = serversFor(request.headers);
      const caller = { principal: request.principal, headers: request.headers };
      if (await p.getServer(request.body.name, caller))
        throw conflict('SB_ERR_TOOLS_SERVER_EXISTS', `MCP server '${request.body.name}' is already registered`);
      return reply.code(201).send(await p.registerServer(request.body, caller));
    },
  );

  app.get(
    '/servers/:server_name',
    {
      schema: {
        tags,
        summary: 'One MCP server',
        params: Type.Object({ server_name: Type.String({ minLength: 1 }) }),
        response: { 200: McpServer },
      },
    },
    async (request) => {
      const server = await serversFor(request.headers).getServer(request.params.server_name, {
        principal: request.principal,
        headers: request.headers,
      });
      if (!server)
        throw notFound('SB_ERR_TOOLS_SERVER_NOT_FOUND', `MCP server '${request.params.server_name}' not found`);
      return server;
    },
  );
};

export default servers;
