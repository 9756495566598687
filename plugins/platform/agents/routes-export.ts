import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { callerOf, type AgentDeps } from './deps.ts';
import { canUse } from './runtime/access.ts';
import type { ToolSpec } from './runtime/catalog.ts';
import { generatePythonExport, toolsForExport } from './runtime/export/generator.ts';
import { MAX_DELEGATION_DEPTH } from './runtime/tools/agents.ts';
import { NameParams, type AgentSpec } from './schemas.ts';
import { Type } from '@sinclair/typebox';

/** GET /{name}/export: the agent as a standalone Python script. */
export function exportRoutes(fastify: FastifyInstance, { runtime }: AgentDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/:name/export',
    {
      schema: {
        tags: ['agents'],
        summary: 'The agent as a standalone Python 3 script (standard library only) that runs against this gateway',
        params: NameParams,
        response: { 200: { description: 'Python source', content: { 'text/x-python': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const who = request.principal!;
      const caller = callerOf(request);
      const root = await runtime.specs.get(request.params.name, who);
      const agents = new Map<string, AgentSpec>();
      const tools = new Map<string, ToolSpec[]>();
      // Breadth-first over call_<name> tools, as deep as delegation may go.
      let frontier: Array<[AgentSpec, number]> = [[root, 0]];
      while (frontier.length) {
        const next: Array<[AgentSpec, number]> = [];
        for (const [spec, depth] of frontier) {
          if (agents.has(spec.name)) continue;
          agents.set(spec.name, spec);
          tools.set(spec.name, toolsForExport(spec, await runtime.tools(spec, caller, depth)));
          if (depth >= MAX_DELEGATION_DEPTH || !spec.primitives.agents?.enabled) continue;
          for (const sub of spec.primitives.agents.tools ?? []) {
            const s = await runtime.specs.raw(sub);
            if (s && canUse(s, who)) next.push([s, depth + 1]);
          }
        }
        frontier = next;
      }
      const host = request.headers['x-forwarded-host'] ?? request.headers.host ?? '127.0.0.1:7860';
      const proto = (request.headers['x-forwarded-proto'] as string | undefined) ?? request.protocol;
      const script = generatePythonExport({ agent: root, agents, tools, baseUrl: `${proto}://${host}` });
      return reply
        .header('content-type', 'text/x-python; charset=utf-8')
        .header('content-disposition', `attachment; filename="${root.name}.py"`)
        .send(script);
    },
  );
}
