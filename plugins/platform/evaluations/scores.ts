import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import { Score, ScoreList, ScoreQuery, ScoreRequest } from '../../../core/primitives/evaluations.ts';
import { requireCapability, requireMethod } from '../capability.ts';
import { ownership } from '../ownership.ts';
import { evaluationsFor } from './provider.ts';

const tags = ['evaluations'];
const ScoreParams = Type.Object({ score_id: Type.String({ minLength: 1 }) });
const WHAT = 'score endpoints (offered by the score-recording evaluations backend)';
const missing = (id: string) => notFound('SB_ERR_EVALUATIONS_SCORE_NOT_FOUND', `Score '${id}' not found`);

/** Scores (spec 4.5): only the score-recording backend has them; others answer 501 before any lookup. */
const scores: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/scores',
    {
      schema: { tags, summary: 'Record a score (501 unless supported)', body: ScoreRequest, response: { 201: Score } },
    },
    async (request, reply) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'scores', WHAT);
      const created = await requireMethod(provider, 'createScore', WHAT)(request.body);
      const { ledger, who } = ownership(request);
      await ledger.record('score', provider.name, created.score_id, who, () =>
        requireMethod(provider, 'deleteScore', WHAT)(created.score_id),
      );
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/scores',
    {
      schema: {
        tags,
        summary: 'List scores (501 unless supported)',
        querystring: ScoreQuery,
        response: { 200: ScoreList },
      },
    },
    async (request) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'scores', WHAT);
      return requireMethod(provider, 'listScores', WHAT)(request.query);
    },
  );

  app.get(
    '/scores/:score_id',
    { schema: { tags, summary: 'A score (501 unless supported)', params: ScoreParams, response: { 200: Score } } },
    async (request) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'scores', WHAT);
      const score = await requireMethod(provider, 'getScore', WHAT)(request.params.score_id);
      if (!score) throw missing(request.params.score_id);
      return score;
    },
  );

  app.delete(
    '/scores/:score_id',
    {
      schema: {
        tags,
        summary: 'Delete a score (501 unless supported)',
        params: ScoreParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'scores', WHAT);
      const { score_id } = request.params;
      if (!(await requireMethod(provider, 'getScore', WHAT)(score_id))) throw missing(score_id);
      const { ledger, who } = ownership(request);
      await ledger.assertChange('score', provider.name, score_id, who);
      if (!(await requireMethod(provider, 'deleteScore', WHAT)(score_id))) throw missing(score_id);
      await ledger.forget('score', provider.name, score_id);
      return reply.code(204).send(null);
    },
  );
};

export default scores;
