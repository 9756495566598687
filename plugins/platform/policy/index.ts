import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import {
  CreateEngineRequest,
  CreatePolicyRequest,
  EnforcementStatus,
  Engine,
  EngineList,
  PageQuery,
  Policy,
  PolicyList,
  UpdatePolicyRequest,
} from '../../../core/primitives/policy.ts';
import { engineOr404, policyFor, requireAdmin } from './access.ts';
import generations from './generations.ts';
import schema from './schema.ts';

const tags = ['policy'];
const EngineParams = Type.Object({ engine_id: Type.String({ minLength: 1 }) });
const PolicyParams = Type.Object({
  engine_id: Type.String({ minLength: 1 }),
  policy_id: Type.String({ minLength: 1 }),
});

const policyMissing = (engineId: string, policyId: string) =>
  notFound('SB_ERR_POLICY_NOT_FOUND', `Policy '${policyId}' not found in engine '${engineId}'`);

/** /api/v1/policy: engines and their policies (spec 4.6). */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/enforcement',
    {
      schema: {
        tags,
        summary: 'Active enforcement engine and whether enforcement is on',
        response: { 200: EnforcementStatus },
      },
    },
    async (request) => policyFor(request).enforcement(),
  );

  app.post(
    '/engines',
    {
      schema: { tags, summary: 'Create a policy engine (admin)', body: CreateEngineRequest, response: { 201: Engine } },
    },
    async (request, reply) => {
      requireAdmin(request, 'create policy engines');
      return reply.code(201).send(await policyFor(request).createEngine(request.body));
    },
  );

  app.get(
    '/engines',
    { schema: { tags, summary: 'List policy engines', querystring: PageQuery, response: { 200: EngineList } } },
    async (request) => policyFor(request).listEngines(request.query),
  );

  app.get(
    '/engines/:engine_id',
    { schema: { tags, summary: 'A policy engine', params: EngineParams, response: { 200: Engine } } },
    async (request) => engineOr404(policyFor(request), request.params.engine_id),
  );

  app.delete(
    '/engines/:engine_id',
    {
      schema: {
        tags,
        summary: 'Delete a policy engine and its policies (admin)',
        params: EngineParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      requireAdmin(request, 'delete policy engines');
      const provider = policyFor(request);
      if (!(await provider.deleteEngine(request.params.engine_id)))
        await engineOr404(provider, request.params.engine_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/engines/:engine_id/policies',
    {
      schema: {
        tags,
        summary: 'Add a policy to an engine (admin)',
        params: EngineParams,
        body: CreatePolicyRequest,
        response: { 201: Policy },
      },
    },
    async (request, reply) => {
      requireAdmin(request, 'create policies');
      const provider = policyFor(request);
      await engineOr404(provider, request.params.engine_id);
      const policy = await provider.createPolicy(request.params.engine_id, request.body);
      // The engine can vanish between the check and the write (another admin deleted it).
      if (!policy)
        throw notFound('SB_ERR_POLICY_ENGINE_NOT_FOUND', `Policy engine '${request.params.engine_id}' not found`);
      return reply.code(201).send(policy);
    },
  );

  app.get(
    '/engines/:engine_id/policies',
    {
      schema: {
        tags,
        summary: 'List the policies of an engine',
        params: EngineParams,
        querystring: PageQuery,
        response: { 200: PolicyList },
      },
    },
    async (request) => {
      const provider = policyFor(request);
      const list = await provider.listPolicies(request.params.engine_id, request.query);
      if (!list)
        throw notFound('SB_ERR_POLICY_ENGINE_NOT_FOUND', `Policy engine '${request.params.engine_id}' not found`);
      return list;
    },
  );

  app.get(
    '/engines/:engine_id/policies/:policy_id',
    { schema: { tags, summary: 'A policy', params: PolicyParams, response: { 200: Policy } } },
    async (request) => {
      const { engine_id, policy_id } = request.params;
      const provider = policyFor(request);
      const policy = await provider.getPolicy(engine_id, policy_id);
      if (!policy) {
        await engineOr404(provider, engine_id);
        throw policyMissing(engine_id, policy_id);
      }
      return policy;
    },
  );

  app.put(
    '/engines/:engine_id/policies/:policy_id',
    {
      schema: {
        tags,
        summary: 'Update a policy (admin)',
        params: PolicyParams,
        body: UpdatePolicyRequest,
        response: { 200: Policy },
      },
    },
    async (request) => {
      requireAdmin(request, 'update policies');
      const { engine_id, policy_id } = request.params;
      const provider = policyFor(request);
      const policy = await provider.updatePolicy(engine_id, policy_id, request.body);
      if (!policy) {
        await engineOr404(provider, engine_id);
        throw policyMissing(engine_id, policy_id);
      }
      return policy;
    },
  );

  app.delete(
    '/engines/:engine_id/policies/:policy_id',
    { schema: { tags, summary: 'Delete a policy (admin)', params: PolicyParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      requireAdmin(request, 'delete policies');
      const { engine_id, policy_id } = request.params;
      const provider = policyFor(request);
      if (!(await provider.deletePolicy(engine_id, policy_id))) {
        await engineOr404(provider, engine_id);
        throw policyMissing(engine_id, policy_id);
      }
      return reply.code(204).send(null);
    },
  );

  await app.register(generations);
  await app.register(schema);
};

export default routes;
