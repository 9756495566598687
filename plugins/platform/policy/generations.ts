import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import {
  Generation,
  GenerationAssets,
  GenerationList,
  GenerationRequest,
  PageQuery,
} from '../../../core/primitives/policy.ts';
import { requireCapability, requireMethod } from '../capability.ts';
import { engineOr404, policyFor, requireAdmin } from './access.ts';

const tags = ['policy'];
const EngineParams = Type.Object({ engine_id: Type.String({ minLength: 1 }) });
const GenerationParams = Type.Object({
  engine_id: Type.String({ minLength: 1 }),
  generation_id: Type.String({ minLength: 1 }),
});
const WHAT = 'policy generation (offered by the managed-cloud policy provider)';

const generationMissing = (engineId: string, id: string) =>
  notFound('SB_ERR_POLICY_GENERATION_NOT_FOUND', `Policy generation '${id}' not found in engine '${engineId}'`);

/**
 * Policy generation (spec 4.6): only the managed-cloud provider has it, so the
 * capability is checked first and every other provider answers 501.
 */
const generations: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/engines/:engine_id/generations',
    {
      schema: {
        tags,
        summary: 'Start a policy generation (admin; 501 unless supported)',
        params: EngineParams,
        body: Type.Optional(GenerationRequest),
        response: { 201: Generation },
      },
    },
    async (request, reply) => {
      const provider = policyFor(request);
      requireCapability(provider, 'generations', WHAT);
      requireAdmin(request, 'start policy generations');
      await engineOr404(provider, request.params.engine_id);
      const start = requireMethod(provider, 'startGeneration', WHAT);
      return reply.code(201).send(await start(request.params.engine_id, request.body ?? {}));
    },
  );

  app.get(
    '/engines/:engine_id/generations',
    {
      schema: {
        tags,
        summary: 'List policy generations (501 unless supported)',
        params: EngineParams,
        querystring: PageQuery,
        response: { 200: GenerationList },
      },
    },
    async (request) => {
      const provider = policyFor(request);
      requireCapability(provider, 'generations', WHAT);
      await engineOr404(provider, request.params.engine_id);
      return requireMethod(provider, 'listGenerations', WHAT)(request.params.engine_id, request.query);
    },
  );

  app.get(
    '/engines/:engine_id/generations/:generation_id',
    {
      schema: {
        tags,
        summary: 'Status of a policy generation (501 unless supported)',
        params: GenerationParams,
        response: { 200: Generation },
      },
    },
    async (request) => {
      const { engine_id, generation_id } = request.params;
      const provider = policyFor(request);
      requireCapability(provider, 'generations', WHAT);
      await engineOr404(provider, engine_id);
      const gen = await requireMethod(provider, 'getGeneration', WHAT)(engine_id, generation_id);
      if (!gen) throw generationMissing(engine_id, generation_id);
      return gen;
    },
  );

  app.get(
    '/engines/:engine_id/generations/:generation_id/assets',
    {
      schema: {
        tags,
        summary: 'Policies a generation produced (501 unless supported)',
        params: GenerationParams,
        response: { 200: GenerationAssets },
      },
    },
    async (request) => {
      const { engine_id, generation_id } = request.params;
      const provider = policyFor(request);
      requireCapability(provider, 'generations', WHAT);
      await engineOr404(provider, engine_id);
      const assets = await requireMethod(provider, 'getGenerationAssets', WHAT)(engine_id, generation_id);
      if (!assets) throw generationMissing(engine_id, generation_id);
      return assets;
    },
  );
};

export default generations;
