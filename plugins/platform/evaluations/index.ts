import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import {
  CreateEvaluatorRequest,
  EvaluateRequest,
  EvaluateResponse,
  Evaluator,
  EvaluatorList,
  EvaluatorPageQuery,
  UpdateEvaluatorRequest,
  type EvaluationsProvider,
} from '../../../core/primitives/evaluations.ts';
import type { ObservabilityProvider } from '../../../core/primitives/observability.ts';
import { requireCapability } from '../capability.ts';
import { assertOwnTrace } from '../observability/visibility.ts';
import { ownership } from '../ownership.ts';
import onlineConfigs from './online-configs.ts';
import { checkEvaluatorType, evaluationsFor } from './provider.ts';
import scores from './scores.ts';

const tags = ['evaluations'];
const EvaluatorParams = Type.Object({ evaluator_id: Type.String({ minLength: 1 }) });
const missing = (id: string) => notFound('SB_ERR_EVALUATIONS_EVALUATOR_NOT_FOUND', `Evaluator '${id}' not found`);

/** 404 when absent, 403 unless the caller created it or is an admin (plugins/platform/ownership.ts). */
async function changeable(request: FastifyRequest, provider: EvaluationsProvider, id: string): Promise<void> {
  if (!(await provider.getEvaluator(id))) throw missing(id);
  const { ledger, who } = ownership(request);
  await ledger.assertChange('evaluator', provider.name, id, who);
}

/**
 * Judging a trace reads it, so a non-admin may target only their own traces (as reading it through
 * /observability would require). A target observability does not know is left to the provider (404).
 */
async function assertTargetVisible(request: FastifyRequest, target: string | undefined): Promise<void> {
  if (target === undefined || request.principal!.is_admin) return;
  const obs = request.server.sb.providers.get<ObservabilityProvider>('observability');
  const trace = obs?.getTrace ? await obs.getTrace(target) : undefined;
  if (trace) assertOwnTrace(request, trace);
}

/** /api/v1/evaluations: evaluators, evaluate, scores and online configs (spec 4.5). */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/evaluators',
    { schema: { tags, summary: 'Create an evaluator', body: CreateEvaluatorRequest, response: { 201: Evaluator } } },
    async (request, reply) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'evaluators', 'evaluators');
      checkEvaluatorType(provider, request.body.evaluator_type);
      const created = await provider.createEvaluator(request.body);
      const { ledger, who } = ownership(request);
      await ledger.record('evaluator', provider.name, created.evaluator_id, who, () =>
        provider.deleteEvaluator(created.evaluator_id),
      );
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/evaluators',
    {
      schema: {
        tags,
        summary: 'List evaluators (max_results default 100, paged by next_token)',
        querystring: EvaluatorPageQuery,
        response: { 200: EvaluatorList },
      },
    },
    async (request) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'evaluators', 'evaluators');
      return provider.listEvaluators(request.query);
    },
  );

  app.get(
    '/evaluators/:evaluator_id',
    { schema: { tags, summary: 'An evaluator', params: EvaluatorParams, response: { 200: Evaluator } } },
    async (request) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'evaluators', 'evaluators');
      const ev = await provider.getEvaluator(request.params.evaluator_id);
      if (!ev) throw missing(request.params.evaluator_id);
      return ev;
    },
  );

  app.put(
    '/evaluators/:evaluator_id',
    {
      schema: {
        tags,
        summary: 'Update an evaluator',
        params: EvaluatorParams,
        body: UpdateEvaluatorRequest,
        response: { 200: Evaluator },
      },
    },
    async (request) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'evaluators', 'evaluators');
      checkEvaluatorType(provider, request.body.evaluator_type);
      await changeable(request, provider, request.params.evaluator_id);
      const ev = await provider.updateEvaluator(request.params.evaluator_id, request.body);
      if (!ev) throw missing(request.params.evaluator_id);
      return ev;
    },
  );

  app.delete(
    '/evaluators/:evaluator_id',
    { schema: { tags, summary: 'Delete an evaluator', params: EvaluatorParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'evaluators', 'evaluators');
      await changeable(request, provider, request.params.evaluator_id);
      if (!(await provider.deleteEvaluator(request.params.evaluator_id))) throw missing(request.params.evaluator_id);
      await ownership(request).ledger.forget('evaluator', provider.name, request.params.evaluator_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/evaluate',
    {
      schema: {
        tags,
        summary:
          'Evaluate: a judged score (llm_judge, managed cloud), a recorded score (score-recording backend) or a placeholder (noop)',
        body: EvaluateRequest,
        response: { 200: EvaluateResponse },
      },
    },
    async (request) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'evaluate', 'evaluate');
      await assertTargetVisible(request, request.body.target);
      return provider.evaluate(request.body);
    },
  );

  await app.register(scores);
  await app.register(onlineConfigs);
};

export default routes;
