import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { validateSection } from '../../../core/config.ts';
import { metadataFilter } from '../../../core/metadata-denylist.ts';
import { AgentRuntime } from '../agents/runtime/runtime.ts';
import { SseStreams } from '../agents/sse.ts';
import { generateTeamScript } from './export/generator.ts';
import runs from './runs.ts';
import { CreateTeamRequest, Deleted, TeamList, TeamParams, TeamSpec, UpdateTeamRequest } from './schemas.ts';
import { TeamSpecs } from './store.ts';
import { TeamRuns } from './runtime/manager.ts';

/** `platform.teams` settings: run bookkeeping (as for agent runs) and the replanning cap. */
const TeamsSettings = Type.Object(
  {
    heartbeat_ms: Type.Integer({ minimum: 10, default: 2000 }),
    stale_after_ms: Type.Integer({ minimum: 20, default: 10_000 }),
    flush_ms: Type.Integer({ minimum: 0, default: 25 }),
    poll_ms: Type.Integer({ minimum: 5, default: 100 }),
    resume_wait_ms: Type.Integer({ minimum: 0, default: 180_000 }),
    event_ttl_ms: Type.Integer({ minimum: 1000, default: 7 * 24 * 3600 * 1000 }),
    /** Replanning rounds after tasks fail (the planner sees the failures); 0 turns replanning off. */
    max_replans: Type.Integer({ minimum: 0, maximum: 5, default: 1 }),
    /** Least time between two worker_token events of one task. */
    token_interval_ms: Type.Integer({ minimum: 0, default: 100 }),
  },
  { additionalProperties: false },
);

const tags = ['teams'];

/** /api/v1/teams: team specs (spec 2.3, 4.2). Runs live in runs.ts. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const teams = new TeamSpecs(app.sb.store);
  const settings = validateSection(TeamsSettings, app.sb.settings.config.platform?.teams, 'platform.teams');
  // A runtime of its own over the same store: specs, sessions and history are shared through it.
  const runtime = new AgentRuntime(app.sb, metadataFilter(app.sb.settings.config.metadata_denylists));
  const teamRuns = new TeamRuns(app.sb.store, runtime, settings, app.log);
  const sse = new SseStreams();
  app.addHook('preClose', async () => {
    await teamRuns.close();
    sse.closeAll();
  });

  app.post(
    '/',
    {
      schema: {
        tags,
        summary: 'Create a team (409 if the name exists)',
        body: CreateTeamRequest,
        response: { 201: TeamSpec },
      },
    },
    async (request, reply) => reply.code(201).send(await teams.create(request.body, request.principal!)),
  );

  app.get(
    '/',
    { schema: { tags, summary: 'Teams the caller owns or that are shared with them', response: { 200: TeamList } } },
    async (request) => {
      const list = await teams.list(request.principal!);
      return { teams: list, total: list.length };
    },
  );

  app.get(
    '/:name',
    { schema: { tags, summary: 'A team spec', params: TeamParams, response: { 200: TeamSpec } } },
    async (request) => teams.get(request.params.name, request.principal!),
  );

  app.put(
    '/:name',
    {
      schema: {
        tags,
        summary: 'Update a team (owner or admin; partial)',
        params: TeamParams,
        body: UpdateTeamRequest,
        response: { 200: TeamSpec },
      },
    },
    async (request) => teams.update(request.params.name, request.body, request.principal!),
  );

  app.delete(
    '/:name',
    { schema: { tags, summary: 'Delete a team (owner or admin)', params: TeamParams, response: { 200: Deleted } } },
    async (request) => {
      await teams.delete(request.params.name, request.principal!);
      // `status` is the reference's answer field (its client reads it); `deleted` is ours.
      return { status: 'deleted' as const, deleted: true, name: request.params.name };
    },
  );

  app.get(
    '/:name/export',
    {
      schema: {
        tags,
        summary: 'The team as a standalone Python 3 script (standard library only) that runs against this gateway',
        params: TeamParams,
        response: {
          200: { description: 'text/x-python attachment', content: { 'text/x-python': { schema: Type.String() } } },
        },
      },
    },
    async (request, reply) => {
      const team = await teams.get(request.params.name, request.principal!);
      const host = request.headers['x-forwarded-host'] ?? request.headers.host ?? '127.0.0.1:7860';
      const proto = (request.headers['x-forwarded-proto'] as string | undefined) ?? request.protocol;
      return reply
        .header('content-type', 'text/x-python; charset=utf-8')
        .header('content-disposition', `attachment; filename="${team.name}.py"`)
        .send(generateTeamScript(team, `${proto}://${host}`, settings.max_replans));
    },
  );

  await app.register(runs, { teams, runtime, runs: teamRuns, sse });
};

export default routes;
