import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { forbidden, notFound, unprocessable } from '../../../core/errors.ts';
import type { Principal } from '../../../core/primitives/auth.ts';
import type { LlmProvider } from '../../../core/primitives/llm.ts';
import type { SseStreams } from '../agents/sse.ts';
import { routingHeaders, type AgentRuntime, type Caller } from '../agents/runtime/runtime.ts';
import type { TeamEvent } from './runtime/events.ts';
import type { TeamRuns } from './runtime/manager.ts';
import type { TeamRunRecord } from './runtime/run-store.ts';
import { runSummary } from './runtime/team-run.ts';
import {
  CancelResponse,
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
  type TeamSpec,
} from './schemas.ts';
import type { TeamSpecs } from './store.ts';

const tags = ['teams'];

export interface RunDeps {
  teams: TeamSpecs;
  runtime: AgentRuntime;
  runs: TeamRuns;
  sse: SseStreams;
}

const callerOf = (request: FastifyRequest): Caller => ({
  principal: request.principal!,
  headers: routingHeaders(request.headers),
});

/**
 * Team runs (spec 2.3, 4.2; issue 17): background runs on the agent runtime,
 * every event in the core store. Runs are scoped like agent sessions: the
 * caller who started a run, or an admin, sees and controls it.
 */
const runs: FastifyPluginAsyncTypebox<RunDeps> = async (app, { teams, runtime, runs, sse: streams }) => {
  /** Every member must exist and be usable by the caller, and route to an LLM, before anything starts. */
  const checkMembers = async (team: TeamSpec, caller: Caller) => {
    const names = [...new Set([team.planner, ...team.workers, team.synthesizer])];
    const specs = await Promise.all(names.map((n) => runtime.specs.raw(n)));
    const missing = names.filter((_, i) => !specs[i]);
    if (missing.length) {
      throw unprocessable(
        'SB_ERR_TEAM_AGENT_MISSING',
        `Team '${team.name}' cannot run: agent${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')} do${missing.length > 1 ? '' : 'es'} not exist; create ${missing.length > 1 ? 'them' : 'it'} or update the team`,
      );
    }
    for (const n of names) {
      const spec = await runtime.specs.get(n, caller.principal);
      runtime.resolve<LlmProvider>(spec, caller, 'llm');
    }
  };

  const owned = (rec: TeamRunRecord, who: Principal) => {
    if (!who.is_admin && rec.actor_id !== who.id)
      throw forbidden(
        'SB_ERR_TEAM_RUN_FORBIDDEN',
        `Run '${rec.team_run_id}' of team '${rec.team_name}' was started by another user`,
      );
    return rec;
  };

  const load = async (request: { params: { name: string; id: string }; principal?: Principal }) => {
    const team = await teams.get(request.params.name, request.principal!);
    const rec = await runs.store.get(team.name, request.params.id);
    if (!rec) throw notFound('SB_ERR_TEAMS_RUN_NOT_FOUND', `Team '${team.name}' has no run '${request.params.id}'`);
    return { team, rec: owned(rec, request.principal!) };
  };

  /** Stream the events a subscriber gets, from the first; the stream ends with the run's `done`. */
  const stream = (
    request: FastifyRequest,
    reply: FastifyReply,
    start: (sub: (ev: TeamEvent) => void) => Promise<{ log: { record: TeamRunRecord } }>,
  ) =>
    (async () => {
      const buffered: TeamEvent[] = [];
      let sink = (ev: TeamEvent) => void buffered.push(ev);
      const subscriber = (ev: TeamEvent) => sink(ev);
      // Refusals (422, 409...) happen in start(), before the stream opens.
      const run = await start(subscriber);
      const sse = streams.start(request, reply);
      sink = (ev) => {
        sse.send(ev);
        if (ev.type === 'done') sse.end();
      };
      for (const ev of buffered) sink(ev);
      // The run goes on when the client leaves; it is only no longer told.
      sse.closed.addEventListener('abort', () => runs.unsubscribe(run.log.record.team_run_id, subscriber), {
        once: true,
      });
    })();

  app.post(
    '/:name/run',
    {
      schema: {
        tags,
        summary: 'Run the team and wait for its answer (the run continues if the client leaves)',
        params: TeamParams,
        body: RunRequest,
        response: { 200: RunResponse },
      },
    },
    async (request) => {
      const team = await teams.get(request.params.name, request.principal!);
      const caller = callerOf(request);
      await checkMembers(team, caller);
      const run = await runs.start(team, caller, request.body.message);
      return runSummary(await run.done);
    },
  );

  app.post(
    '/:name/run/stream',
    {
      schema: {
        tags,
        summary:
          'Run the team as a background task streamed as server-sent events; it continues if the client disconnects, every event is recorded',
        params: TeamParams,
        body: RunRequest,
        response: { 200: EventStream },
      },
    },
    async (request, reply) => {
      const team = await teams.get(request.params.name, request.principal!);
      const caller = callerOf(request);
      await checkMembers(team, caller);
      await stream(request, reply, (sub) => runs.start(team, caller, request.body.message, sub));
    },
  );

  app.get(
    '/:name/runs',
    {
      schema: {
        tags,
        summary: "The caller's runs of the team, oldest first (admins see all)",
        params: TeamParams,
        response: { 200: RunList },
      },
    },
    async (request) => {
      const who = request.principal!;
      const team = await teams.get(request.params.name, who);
      const list = (await runs.store.list(team.name)).filter((r) => who.is_admin || r.actor_id === who.id);
      return {
        team_name: team.name,
        runs: list.map((r) => ({
          team_run_id: r.team_run_id,
          status: runs.view(r).display_status,
          phase: r.phase,
          started_at: r.started_at,
          ended_at: r.ended_at,
        })),
      };
    },
  );

  app.get(
    '/:name/runs/:id',
    { schema: { tags, summary: 'Task board of a run', params: RunParams, response: { 200: TaskBoard } } },
    async (request) => {
      const { rec } = await load(request);
      const v = runs.view(rec);
      return { ...v, ...runSummary(v), status: v.display_status, response: v.response };
    },
  );

  app.get(
    '/:name/runs/:id/status',
    {
      schema: {
        tags,
        summary: 'running or idle (a run whose process stopped is idle)',
        params: RunParams,
        response: { 200: RunStatusResponse },
      },
    },
    async (request) => {
      const { team, rec } = await load(request);
      return {
        team_run_id: rec.team_run_id,
        team_name: team.name,
        status: runs.isActive(rec) ? ('running' as const) : ('idle' as const),
      };
    },
  );

  app.get(
    '/:name/runs/:id/events',
    {
      schema: {
        tags,
        summary: 'Every recorded event of a run, in order',
        params: RunParams,
        response: { 200: RunEvents },
      },
    },
    async (request) => {
      const { rec } = await load(request);
      const events = await runs.store.readEvents(rec.team_run_id, 0, rec.event_count);
      return { team_run_id: rec.team_run_id, status: runs.view(rec).display_status, events };
    },
  );

  app.get(
    '/:name/runs/:id/stream',
    {
      schema: {
        tags,
        summary:
          'Reconnect: replays every recorded event, then follows the run while it is active (waits up to resume_wait_ms for a run another replica resumes)',
        params: RunParams,
        response: { 200: EventStream },
      },
    },
    async (request, reply) => {
      const { team, rec } = await load(request);
      const sse = streams.start(request, reply);
      for await (const ev of runs.follow(team.name, rec.team_run_id, sse.closed)) sse.send(ev);
      sse.end();
    },
  );

  app.delete(
    '/:name/runs/:id/cancel',
    {
      schema: {
        tags,
        summary:
          'Cancel the active run at its workers\u2019 next checkpoint (404 if none); in-progress tasks become failed',
        params: RunParams,
        response: { 200: CancelResponse },
      },
    },
    async (request) => {
      const who = request.principal!;
      const team = await teams.get(request.params.name, who);
      const rec = await runs.store.get(team.name, request.params.id);
      if (rec) owned(rec, who);
      await runs.cancel(rec, team.name, request.params.id);
      return { team_run_id: request.params.id, team_name: team.name, status: 'cancelled' as const };
    },
  );

  app.delete(
    '/:name/runs/:id',
    {
      schema: {
        tags,
        summary: 'Delete the tasks and events of a finished run (409 while it runs)',
        params: RunParams,
        response: { 200: RunDeleted },
      },
    },
    async (request) => {
      const { rec } = await load(request);
      await runs.remove(rec);
      return { deleted: true, team_run_id: rec.team_run_id };
    },
  );

  app.post(
    '/:name/runs/:id/tasks/:task_id/retry',
    {
      schema: {
        tags,
        summary:
          'Re-run a failed task on its worker (SSE), resuming from its partial output; its dependants and the synthesis run again. 409 unless the task failed',
        params: TaskParams,
        response: { 200: EventStream },
      },
    },
    async (request, reply) => {
      const { team, rec } = await load(request);
      const caller = callerOf(request);
      await checkMembers(team, caller);
      await stream(request, reply, (sub) => runs.retry(team, caller, rec, request.params.task_id, sub));
    },
  );
};

export default runs;
