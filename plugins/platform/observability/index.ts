import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
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
 * Logs, generations and scores: each kind is ingested (202 with its new id) and listed under a trace filter
 * that a non-admin must give and own; only the schemas, names and provider methods differ.
 */
interface RecordKind<I extends TSchema, Q extends TSchema, Id extends string> {
  /** The path, the provider capability and the word of the trace-filter refusal. */
  kind: 'logs' | 'generations' | 'scores';
  /** What the capability refusals call the records. */
  what: string;
  ingest: { summary: string; body: I; accepted: TSchema; id: Id };
  list: { summary: string; querystring: Q; response: TSchema };
  /** The provider's methods, looked up after its capability is checked (a missing one is a 501). */
  ingestWith: (p: ObservabilityProvider) => (body: Static<I>) => Promise<Record<Id, string>>;
  listWith: (p: ObservabilityProvider) => (query: Static<Q>) => Promise<unknown>;
}

/** The query's trace_id filter; every kind's query schema has it as an optional string (Ajv checked it). */
function traceFilter(query: unknown): string | undefined {
  return typeof query === 'object' && query !== null && 'trace_id' in query && typeof query.trace_id === 'string'
    ? query.trace_id
    : undefined;
}

function recordKind<I extends TSchema, Q extends TSchema, Id extends string>(
  app: Parameters<FastifyPluginAsyncTypebox>[0],
  k: RecordKind<I, Q, Id>,
): void {
  const path = `/${k.kind}`;
  // Typed as plain TSchema: with generic TypeBox schemas the type provider cannot resolve the reply type
  // (RecordKind ties the body and query to their schemas).
  const accepted: Record<number, TSchema> = { 202: k.ingest.accepted };
  const listed: Record<number, TSchema> = { 200: k.list.response };
  app.post(
    path,
    { schema: { tags, summary: k.ingest.summary, body: k.ingest.body, response: accepted } },
    async (request, reply) => {
      const p = writer(request, k.kind, k.what);
      const created = await k.ingestWith(p)(request.body);
      return reply.code(202).send({ [k.ingest.id]: created[k.ingest.id], status: 'accepted' as const });
    },
  );
  app.get(
    path,
    { schema: { tags, summary: k.list.summary, querystring: k.list.querystring, response: listed } },
    async (request) => {
      const p = reader(request, k.kind, k.what);
      const query: Static<Q> = request.query;
      await assertTraceFilter(request, p, traceFilter(query), k.kind);
      return k.listWith(p)(query);
    },
  );
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

  recordKind(app, {
    kind: 'logs',
    what: 'logs',
    ingest: { summary: 'Ingest a log entry (202)', body: LogInput, accepted: LogAccepted, id: 'log_id' },
    list: { summary: 'List log entries, newest first', querystring: LogQuery, response: LogList },
    ingestWith: (p) => requireMethod(p, 'ingestLog', 'logs'),
    listWith: (p) => requireMethod(p, 'listLogs', 'logs'),
  });
  recordKind(app, {
    kind: 'generations',
    what: 'generations',
    ingest: {
      summary: 'Ingest an LLM generation of a trace (202)',
      body: GenerationInput,
      accepted: GenerationAccepted,
      id: 'generation_id',
    },
    list: { summary: 'List generations, newest first', querystring: GenerationQuery, response: GenerationRecordList },
    ingestWith: (p) => requireMethod(p, 'ingestGeneration', 'generations'),
    listWith: (p) => requireMethod(p, 'listGenerations', 'generations'),
  });
  recordKind(app, {
    kind: 'scores',
    what: 'trace scores',
    ingest: {
      summary: 'Attach a score to a trace (202)',
      body: TraceScoreInput,
      accepted: ScoreAccepted,
      id: 'score_id',
    },
    list: { summary: 'List trace scores, newest first', querystring: TraceScoreQuery, response: TraceScoreList },
    ingestWith: (p) => requireMethod(p, 'ingestScore', 'trace scores'),
    listWith: (p) => requireMethod(p, 'listScores', 'trace scores'),
  });

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
