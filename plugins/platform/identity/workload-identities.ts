import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { conflict, notFound } from '../../../core/errors.ts';
import {
  CreateWorkloadIdentityRequest,
  UpdateWorkloadIdentityRequest,
  WorkloadIdentity,
  type IdentityProvider,
} from '../../../core/primitives/identity.ts';
import { requireCapability } from '../capability.ts';
import { ownership } from '../ownership.ts';

const tags = ['identity'];
const NameParams = Type.Object({ name: Type.String({ minLength: 1 }) });
const missing = (name: string) =>
  notFound('SB_ERR_IDENTITY_WORKLOAD_NOT_FOUND', `Workload identity '${name}' not found`);

/** /api/v1/identity/workload-identities CRUD. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const identityFor = (headers: Record<string, string | string[] | undefined>) => {
    const p = app.sb.providers.resolve<IdentityProvider>('identity', headers);
    requireCapability(p, 'workload_identities', 'workload identities');
    return p;
  };
  /** 404 when absent, 403 unless the caller created it or is an admin (plugins/platform/ownership.ts). */
  const changeable = async (request: FastifyRequest, provider: IdentityProvider, name: string) => {
    if (!(await provider.getWorkloadIdentity(name))) throw missing(name);
    const { ledger, who } = ownership(request);
    await ledger.assertChange('workload_identity', provider.name, name, who);
  };

  app.post(
    '/',
    {
      schema: {
        tags,
        summary: 'Create a workload identity',
        body: CreateWorkloadIdentityRequest,
        response: { 201: WorkloadIdentity },
      },
    },
    async (request, reply) => {
      const provider = identityFor(request.headers);
      const created = await provider.createWorkloadIdentity(request.body);
      if (!created)
        throw conflict(
          'SB_ERR_IDENTITY_WORKLOAD_EXISTS',
          `Workload identity '${request.body.name}' already exists; update it with PUT instead`,
        );
      const { ledger, who } = ownership(request);
      await ledger.record('workload_identity', provider.name, created.name, who, () =>
        provider.deleteWorkloadIdentity(created.name),
      );
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/',
    {
      schema: {
        tags,
        summary: 'List workload identities',
        response: { 200: Type.Object({ workload_identities: Type.Array(WorkloadIdentity) }) },
      },
    },
    async (request) => ({
      workload_identities: await identityFor(request.headers).listWorkloadIdentities(),
    }),
  );

  app.get(
    '/:name',
    { schema: { tags, summary: 'One workload identity', params: NameParams, response: { 200: WorkloadIdentity } } },
    async (request) => {
      const w = await identityFor(request.headers).getWorkloadIdentity(request.params.name);
      if (!w) throw missing(request.params.name);
      return w;
    },
  );

  app.put(
    '/:name',
    {
      schema: {
        tags,
        summary: 'Replace the allowed return URLs',
        params: NameParams,
        body: UpdateWorkloadIdentityRequest,
        response: { 200: WorkloadIdentity },
      },
    },
    async (request) => {
      const provider = identityFor(request.headers);
      await changeable(request, provider, request.params.name);
      const w = await provider.updateWorkloadIdentity(request.params.name, request.body);
      if (!w) throw missing(request.params.name);
      return w;
    },
  );

  app.delete(
    '/:name',
    { schema: { tags, summary: 'Delete a workload identity', params: NameParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const provider = identityFor(request.headers);
      await changeable(request, provider, request.params.name);
      if (!(await provider.deleteWorkloadIdentity(request.params.name))) throw missing(request.params.name);
      await ownership(request).ledger.forget('workload_identity', provider.name, request.params.name);
      return reply.code(204).send(null);
    },
  );
};

export default routes;
