import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { forbidden, notFound } from '../../../core/errors.ts';
import {
  GenerationInput,
  GenerationRecord,
  GenerationRecordList,
  Trace,
  TraceScore,
  TraceScoreInput,
  TraceScoreList,
  TraceUpdate,
  type ObservabilityProvider,
} from '../../../core/primitives/observability.ts';
import { requireCapability, requireMethod } from '../capability.ts';
import { assertOwnTrace, assertTraceFilter } from './visibility.ts';

/**
 * Routes the reference platform client calls and the spec leaves out (issue 14):
 * updating a trace, generations and scores addressed through their trace, and
 * flush. They use the same primitive methods as the spec's routes, so every
 * provider with those methods serves them.
 */

const tags = ['observability'];
const TraceParams = Type.Object({ trace_id: Type.String({ minLength: 1, maxLength: 256 }) });
const Page = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
// The reference client also sends a generation's `level`; kept under metadata.level.
const GenerationBody = Type.Composite(
  [Type.Omit(GenerationInput, ['trace_id']), Type.Object({ level: Type.Optional(Type.String()) })],
  { additionalProperties: false },
);
const ScoreBody = Type.Omit(TraceScoreInput, ['trace_id'], { additionalProperties: false });
const Flushed = Type.Object({ status: Type.Literal('accepted') });

const providerFor = (request: FastifyRequest) =>
  request.server.sb.providers.resolve<ObservabilityProvider>('observability', request.headers);

function provider(request: FastifyRequest, needs: string[], what: string): ObservabilityProvider {
  const p = providerFor(request);
  for (const c of needs) requireCapability(p, c, what);
  return p;
}

/** The trace, if it exists and the caller may change it (its user or an admin). */
async function ownTrace(request: FastifyRequest, p: ObservabilityProvider, traceId: string): Promise<Trace> {
  const trace = await requireMethod(p, 'getTrace', 'reading traces')(traceId);
  if (!trace) throw notFound('SB_ERR_OBSERVABILITY_TRACE_NOT_FOUND', `Trace '${traceId}' not found`);
  assertOwnTrace(request, trace);
  return trace;
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.put(
    '/traces/:trace_id',
    {
      schema: {
        tags,
        summary: 'Update a trace (given fields replace, metadata is merged)',
        params: TraceParams,
        body: TraceUpdate,
        response: { 200: Trace },
      },
    },
    async (request) => {
      const p = provider(request, ['ingest', 'query'], 'updating traces');
      const { trace_id } = request.params;
      await ownTrace(request, p, trace_id);
      const who = request.principal!;
      if (!who.is_admin && request.body.user_id !== undefined && request.body.user_id !== who.id) {
        throw forbidden(
          'SB_ERR_OBSERVABILITY_FORBIDDEN',
          `Only admins move a trace to another user; '${who.id}' asked for user_id '${request.body.user_id}'`,
        );
      }
      const updated = await requireMethod(p, 'updateTrace', 'updating traces')(trace_id, request.body);
      if (!updated) throw notFound('SB_ERR_OBSERVABILITY_TRACE_NOT_FOUND', `Trace '${trace_id}' not found`);
      return updated;
    },
  );

  app.post(
    '/traces/:trace_id/generations',
    {
      schema: {
        tags,
        summary: 'Record an LLM generation of this trace',
        params: TraceParams,
        body: GenerationBody,
        response: { 201: GenerationRecord },
      },
    },
    async (request, reply) => {
      const p = provider(request, ['ingest', 'generations'], 'generations');
      const { trace_id } = request.params;
      const { level, ...body } = request.body;
      const input = {
        ...body,
        trace_id,
        metadata: level === undefined ? body.metadata : { ...body.metadata, level },
      } as GenerationInput;
      const { generation_id } = await requireMethod(p, 'ingestGeneration', 'generations')(input);
      const record: GenerationRecord = {
        generation_id,
        trace_id,
        name: input.name ?? 'generation',
        model: input.model ?? null,
        input: input.input ?? null,
        output: input.output ?? null,
        usage: input.usage ?? {},
        metadata: input.metadata ?? {},
        start_time: input.start_time ?? null,
        end_time: input.end_time ?? null,
        timestamp: new Date().toISOString(),
      };
      return reply.code(201).send(record);
    },
  );

  app.get(
    '/traces/:trace_id/generations',
    {
      schema: {
        tags,
        summary: 'Generations of this trace, newest first',
        params: TraceParams,
        querystring: Page,
        response: { 200: GenerationRecordList },
      },
    },
    async (request) => {
      const p = provider(request, ['query', 'generations'], 'generations');
      await assertTraceFilter(request, p, request.params.trace_id, 'generations');
      return requireMethod(
        p,
        'listGenerations',
        'generations',
      )({ trace_id: request.params.trace_id, ...request.query });
    },
  );

  app.post(
    '/traces/:trace_id/scores',
    {
      schema: {
        tags,
        summary: 'Score this trace',
        params: TraceParams,
        body: ScoreBody,
        response: { 201: TraceScore },
      },
    },
    async (request, reply) => {
      const p = provider(request, ['ingest', 'scores'], 'trace scores');
      const { trace_id } = request.params;
      const input = { ...request.body, trace_id } as TraceScoreInput;
      const { score_id } = await requireMethod(p, 'ingestScore', 'trace scores')(input);
      const score: TraceScore = {
        score_id,
        trace_id,
        name: input.name,
        value: input.value,
        observation_id: input.observation_id ?? null,
        comment: input.comment ?? null,
        data_type: input.data_type ?? null,
        metadata: input.metadata ?? {},
        timestamp: new Date().toISOString(),
      };
      return reply.code(201).send(score);
    },
  );

  app.get(
    '/traces/:trace_id/scores',
    {
      schema: {
        tags,
        summary: 'Scores of this trace, newest first',
        params: TraceParams,
        querystring: Page,
        response: { 200: TraceScoreList },
      },
    },
    async (request) => {
      const p = provider(request, ['query', 'scores'], 'trace scores');
      await assertTraceFilter(request, p, request.params.trace_id, 'scores');
      return requireMethod(p, 'listScores', 'trace scores')({ trace_id: request.params.trace_id, ...request.query });
    },
  );

  app.post(
    '/flush',
    { schema: { tags, summary: 'Send buffered records to the backend now (202)', response: { 202: Flushed } } },
    async (request, reply) => {
      const p = provider(request, ['ingest'], 'flushing');
      // A provider without flush() writes at ingest: nothing is waiting, so the flush is already complete.
      if (p.flush) await p.flush();
      return reply.code(202).send({ status: 'accepted' as const });
    },
  );
};

export default routes;
