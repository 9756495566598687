import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { forbidden, notFound } from '../../../core/errors.ts';
import {
  GenerationAccepted,
  GenerationInput,
  GenerationQuery,
  GenerationRecordList,
  LogAccepted,
  LogInput,
  LogList,
  LogQuery,
  ScoreAccepted,
  SessionDetail,
  SessionList,
  SessionQuery,
  Trace,
  TraceAccepted,
  TraceInput,
  TraceList,
  TraceQuery,
  TraceScoreInput,
  TraceScoreList,
  TraceScoreQuery,
  type ObservabilityProvider,
} from '../../../core/primitives/observability.ts';
import { requireCapability, requireMethod } from '../capability.ts';
import { assertOwnTrace, assertTraceFilter, visibleUser } from './visibility.ts';
import traceRoutes from './trace-routes.ts';

const tags = ['observability'];
const providerFor = (request: FastifyRequest) =>
  request.server.sb.providers.resolve<ObservabilityProvider>('observability', request.headers);

/** Reads need `query` (an export-only backend cannot answer them) plus the record kind's own capability. */
function reader(request: FastifyRequest, capability: string, what: string): ObservabilityProvider {
  const p = providerFor(request);
  requireCapability(p, 'query', `reading ${what} back`);
  if (capability !== 'query') requireCapability(p, capability, what);
  return p;
}

function writer(request: FastifyRequest, capability: string, what: string): ObservabilityProvider {
  const p = providerFor(request);
  requireCapability(p, 'ingest', `ingesting ${what}`);
  if (capability !== 'ingest') requireCapability(p, capability, what);
  return p;
}

/**
 * /api/v1/observability: traces, logs, generations, scores, sessions (spec 4.9 prefix; ANCHOR-FACTS shapes).
 * Reads are scoped to the caller's own traces unless the caller is an admin (visibility.ts).
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(traceRoutes);

  app.post(
    '/traces',
    { schema: { tags, summary: 'Ingest a trace (202)', body: TraceInput, response: { 202: TraceAccepted } } },
    async (request, reply) => {
      const p = writer(request, 'ingest', 'traces');
      return reply.code(202).send(await p.ingestTrace(request.body));
    },
  );

  app.get(
    '/traces',
    { schema: { tags, summary: 'List traces, newest first', querystring: TraceQuery, response: { 200: TraceList } } },
    async (request) => {
      const p = reader(request, 'query', 'traces');
      return requireMethod(
        p,
        'listTraces',
        'listing traces',
      )({ ...request.query, user_id: visibleUser(request, request.query.user_id) });
    },
  );

  app.get(
    '/traces/:trace_id',
    {
      schema: {
        tags,
        summary: 'A trace with its spans',
        params: Type.Object({ trace_id: Type.String({ minLength: 1 }) }),
        response: { 200: Trace },
      },
    },
    async (request) => {
      const p = reader(request, 'query', 'traces');
      const trace = await requireMethod(p, 'getTrace', 'reading traces')(request.params.trace_id);
      if (!trace)
        throw notFound('SB_ERR_OBSERVABILITY_TRACE_NOT_FOUND', `Trace '${request.params.trace_id}' not found`);
      assertOwnTrace(request, trace);
      return trace;
    },
  );

  app.post(
    '/logs',
    { schema: { tags, summary: 'Ingest a log entry (202)', body: LogInput, response: { 202: LogAccepted } } },
    async (request, reply) => {
      const p = writer(request, 'logs', 'logs');
      const { log_id } = await requireMethod(p, 'ingestLog', 'logs')(request.body);
      return reply.code(202).send({ log_id, status: 'accepted' as const });
    },
  );

  app.get(
    '/logs',
    { schema: { tags, summary: 'List log entries, newest first', querystring: LogQuery, response: { 200: LogList } } },
    async (request) => {
      const p = reader(request, 'logs', 'logs');
      await assertTraceFilter(request, p, request.query.trace_id, 'logs');
      return requireMethod(p, 'listLogs', 'logs')(request.query);
    },
  );

  app.post(
    '/generations',
    {
      schema: {
        tags,
        summary: 'Ingest an LLM generation of a trace (202)',
        body: GenerationInput,
        response: { 202: GenerationAccepted },
      },
    },
    async (request, reply) => {
      const p = writer(request, 'generations', 'generations');
      const { generation_id } = await requireMethod(p, 'ingestGeneration', 'generations')(request.body);
      return reply.code(202).send({ generation_id, status: 'accepted' as const });
    },
  );

  app.get(
    '/generations',
    {
      schema: {
        tags,
        summary: 'List generations, newest first',
        querystring: GenerationQuery,
        response: { 200: GenerationRecordList },
      },
    },
    async (request) => {
      const p = reader(request, 'generations', 'generations');
      await assertTraceFilter(request, p, request.query.trace_id, 'generations');
      return requireMethod(p, 'listGenerations', 'generations')(request.query);
    },
  );

  app.post(
    '/scores',
    {
      schema: {
        tags,
        summary: 'Attach a score to a trace (202)',
        body: TraceScoreInput,
        response: { 202: ScoreAccepted },
      },
    },
    async (request, reply) => {
      const p = writer(request, 'scores', 'trace scores');
      const { score_id } = await requireMethod(p, 'ingestScore', 'trace scores')(request.body);
      return reply.code(202).send({ score_id, status: 'accepted' as const });
    },
  );

  app.get(
    '/scores',
    {
      schema: {
        tags,
        summary: 'List trace scores, newest first',
        querystring: TraceScoreQuery,
        response: { 200: TraceScoreList },
      },
    },
    async (request) => {
      const p = reader(request, 'scores', 'trace scores');
      await assertTraceFilter(request, p, request.query.trace_id, 'scores');
      return requireMethod(p, 'listScores', 'trace scores')(request.query);
    },
  );

  app.get(
    '/sessions',
    {
      schema: {
        tags,
        summary: 'Sessions seen in traces, most recent first',
        querystring: SessionQuery,
        response: { 200: SessionList },
      },
    },
    async (request) => {
      const p = reader(request, 'sessions', 'sessions');
      return requireMethod(
        p,
        'listSessions',
        'sessions',
      )({ ...request.query, user_id: visibleUser(request, request.query.user_id) });
    },
  );

  app.get(
    '/sessions/:session_id',
    {
      schema: {
        tags,
        summary: 'A session and its traces',
        params: Type.Object({ session_id: Type.String({ minLength: 1 }) }),
        response: { 200: SessionDetail },
      },
    },
    async (request) => {
      const p = reader(request, 'sessions', 'sessions');
      const detail = await requireMethod(p, 'getSession', 'sessions')(request.params.session_id);
      if (!detail)
        throw notFound(
          'SB_ERR_OBSERVABILITY_SESSION_NOT_FOUND',
          `Session '${request.params.session_id}' not found in traces`,
        );
      if (request.principal!.is_admin) return detail;
      // A session id can be reused by several users: a non-admin sees only their own traces of it.
      const traces = detail.traces.filter((tr) => tr.user_id === request.principal!.id);
      if (traces.length === 0)
        throw forbidden(
          'SB_ERR_OBSERVABILITY_FORBIDDEN',
          `Session '${request.params.session_id}' belongs to another user`,
        );
      const times = traces.map((tr) => tr.timestamp).sort();
      // Token totals cover every trace of the session: shown only when all of them are the caller's.
      const { total_tokens, ...summary } = detail.session;
      const session = {
        ...summary,
        ...(traces.length === detail.traces.length && total_tokens !== undefined ? { total_tokens } : {}),
        user_id: request.principal!.id,
        trace_count: traces.length,
        first_seen: times[0]!,
        last_activity: times[times.length - 1]!,
      };
      return { session, traces };
    },
  );
};

export default routes;
