import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound, notImplemented } from '../../../core/errors.ts';
import {
  EventStream,
  RunDeleted,
  RunEvents,
  RunList,
  RunParams,
  RunRequest,
  RunResponse,
  RunStatusResponse,
  TaskBoard,
  TaskParams,
  TeamParams,
} from './schemas.ts';
import type { TeamSpecs } from './store.ts';

const tags = ['teams'];

const runsUnavailable = (team: string) =>
  notImplemented('SB_ERR_TEAMS_RUNS_NOT_AVAILABLE', `Team runs are not available in this version; team '${team}' is stored but cannot be run yet`);

/** No run can exist while runs are unavailable, so every run id is unknown (spec 7: 404). */
const runMissing = (team: string, id: string) =>
  notFound('SB_ERR_TEAMS_RUN_NOT_FOUND', `Team run '${id}' of team '${team}' not found (team runs are not available in this version)`);

/**
 * Team runs (spec 4.2). Running a team is a later issue: starting a run answers
 * 501, while the read and cancel endpoints answer what is true with no runs at
 * all: an empty run list and 404 for any run id ("no active run" for cancel).
 * The team itself is checked first, so an unknown team is 404 and someone
 * else's team 403 on every route.
 */
const runs: FastifyPluginAsyncTypebox<{ teams: TeamSpecs }> = async (app, { teams }) => {
  app.post(
    '/:name/run',
    { schema: { tags, summary: 'Run the team (not available in this version: 501)', params: TeamParams, body: RunRequest, response: { 200: RunResponse } } },
    async (request) => {
      await teams.get(request.params.name, request.principal!);
      throw runsUnavailable(request.params.name);
    },
  );

  app.post(
    '/:name/run/stream',
    { schema: { tags, summary: 'Run the team as an SSE stream (not available in this version: 501)', params: TeamParams, body: RunRequest, response: { 200: EventStream } } },
    async (request) => {
      await teams.get(request.params.name, request.principal!);
      throw runsUnavailable(request.params.name);
    },
  );

  app.get('/:name/runs', { schema: { tags, summary: 'Runs of the team', params: TeamParams, response: { 200: RunList } } }, async (request) => {
    const team = await teams.get(request.params.name, request.principal!);
    return { team_name: team.name, runs: [] };
  });

  app.get('/:name/runs/:id', { schema: { tags, summary: 'Task board of a run', params: RunParams, response: { 200: TaskBoard } } }, async (request) => {
    await teams.get(request.params.name, request.principal!);
    throw runMissing(request.params.name, request.params.id);
  });

  app.get('/:name/runs/:id/status', { schema: { tags, summary: 'running or idle', params: RunParams, response: { 200: RunStatusResponse } } }, async (request) => {
    await teams.get(request.params.name, request.principal!);
    throw runMissing(request.params.name, request.params.id);
  });

  app.get('/:name/runs/:id/events', { schema: { tags, summary: 'All recorded events of a run', params: RunParams, response: { 200: RunEvents } } }, async (request) => {
    await teams.get(request.params.name, request.principal!);
    throw runMissing(request.params.name, request.params.id);
  });

  app.get('/:name/runs/:id/stream', { schema: { tags, summary: 'SSE reconnect to a run', params: RunParams, response: { 200: EventStream } } }, async (request) => {
    await teams.get(request.params.name, request.principal!);
    throw runMissing(request.params.name, request.params.id);
  });

  app.delete('/:name/runs/:id/cancel', { schema: { tags, summary: 'Cancel the active run (404 if none)', params: RunParams, response: { 200: RunStatusResponse } } }, async (request) => {
    await teams.get(request.params.name, request.principal!);
    throw notFound('SB_ERR_TEAMS_NO_ACTIVE_RUN', `No active run '${request.params.id}' for team '${request.params.name}'`);
  });

  app.delete('/:name/runs/:id', { schema: { tags, summary: 'Delete run data (tasks, events)', params: RunParams, response: { 200: RunDeleted } } }, async (request) => {
    await teams.get(request.params.name, request.principal!);
    throw runMissing(request.params.name, request.params.id);
  });

  app.post(
    '/:name/runs/:id/tasks/:task_id/retry',
    { schema: { tags, summary: 'Retry a failed task (SSE)', params: TaskParams, response: { 200: EventStream } } },
    async (request) => {
      await teams.get(request.params.name, request.principal!);
      throw runMissing(request.params.name, request.params.id);
    },
  );
};

export default runs;
