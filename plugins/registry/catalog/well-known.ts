import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { SECURITY_PENDING } from './scan.ts';
import { v0Name } from './v0.ts';

/** Public discovery (spec 4.8): the well-known server list and the service health. */

const tags = ['registry: discovery'];
const PREVIEW_TOOLS = 5;

const WellKnownServer = Type.Object({
  id: Type.String(),
  name: Type.String(),
  display_name: Type.String(),
  description: Type.String(),
  mcp: Type.Object({ transport: Type.String(), url: Type.String() }),
  auth: Type.Object({ required: Type.Boolean(), type: Type.String(), header: Type.Optional(Type.String()) }),
  tools_preview: Type.Array(Type.Object({ name: Type.String(), description: Type.Optional(Type.String()) })),
  tool_count: Type.Integer(),
  tags: Type.Array(Type.String()),
  version: Type.Optional(Type.String()),
});

export default async function wellKnownRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;

  app.get(
    '/.well-known/mcp-servers',
    {
      schema: {
        tags,
        summary: 'Enabled servers with transport, auth and a tools preview (public, cacheable)',
        response: {
          200: Type.Object({
            servers: Type.Array(WellKnownServer),
            _meta: Type.Object({ registry: Type.String(), updated_at: Type.String(), count: Type.Integer() }),
          }),
        },
      },
    },
    async (request, reply) => {
      const base = `${request.protocol}://${request.host}`;
      const gateway = !catalog.config.registryOnly;
      const servers = catalog.servers
        .list()
        .filter((s) => s.is_enabled && !s.tags.includes(SECURITY_PENDING))
        .map((s) => ({
          id: s.id,
          name: v0Name(catalog, s.path),
          display_name: s.server_name,
          description: s.description,
          mcp: {
            transport: s.supported_transports[0] ?? 'streamable-http',
            // Through the gateway unless the registry only lists servers (then clients call backends directly).
            url: gateway
              ? `${base}${s.path}/${(s.supported_transports[0] ?? '') === 'sse' ? 'sse' : 'mcp'}`
              : (s.mcp_endpoint ?? s.proxy_pass_url),
          },
          auth: gateway
            ? { required: true, type: 'bearer', header: 'X-Authorization' }
            : { required: s.auth_scheme !== 'none', type: s.auth_scheme, header: s.auth_header_name },
          tools_preview: s.tools.slice(0, PREVIEW_TOOLS).map((t) => ({ name: t.name, description: t.description })),
          tool_count: s.tools.length || s.num_tools,
          tags: s.tags,
          version: s.version,
        }));
      const updated = servers.length
        ? catalog.servers.list().reduce((m, s) => (s.updated_at > m ? s.updated_at : m), '')
        : new Date(fastify.sb.startedAt).toISOString();
      reply.header('cache-control', `public, max-age=${catalog.config.well_known_ttl_seconds}`);
      return { servers, _meta: { registry: base, updated_at: updated, count: servers.length } };
    },
  );

  app.get(
    '/health',
    {
      schema: {
        tags,
        summary: 'Registry service health (public)',
        response: {
          200: Type.Object({
            status: Type.String(),
            service: Type.String(),
            store: Type.String(),
            servers: Type.Integer(),
            agents: Type.Integer(),
            skills: Type.Integer(),
            uptime_seconds: Type.Number(),
          }),
          503: Type.Object({
            status: Type.String(),
            service: Type.String(),
            store: Type.String(),
            servers: Type.Integer(),
            agents: Type.Integer(),
            skills: Type.Integer(),
            uptime_seconds: Type.Number(),
          }),
        },
      },
    },
    async (_request, reply) => {
      const store = await fastify.sb.store.healthcheck();
      const body = {
        status: store === 'down' ? 'unhealthy' : 'healthy',
        service: 'switchboard-registry',
        store,
        servers: catalog.servers.index.size,
        agents: catalog.agents.index.size,
        skills: catalog.skills.index.size,
        uptime_seconds: Math.round((Date.now() - fastify.sb.startedAt) / 1000),
      };
      return reply.status(store === 'down' ? 503 : 200).send(body);
    },
  );
}
