import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import { OnlineConfig, OnlineConfigList, OnlineConfigRequest } from '../../../core/primitives/evaluations.ts';
import { requireCapability, requireMethod } from '../capability.ts';
import { ownership } from '../ownership.ts';
import { evaluationsFor } from './provider.ts';

const tags = ['evaluations'];
const ConfigParams = Type.Object({ config_id: Type.String({ minLength: 1 }) });
const WHAT = 'online evaluation configs (offered by the managed-cloud evaluations backend)';
const missing = (id: string) =>
  notFound('SB_ERR_EVALUATIONS_CONFIG_NOT_FOUND', `Online evaluation config '${id}' not found`);

/** Online evaluation configs (spec 4.5): managed-cloud only; everything else answers 501. */
const onlineConfigs: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/online-configs',
    {
      schema: {
        tags,
        summary: 'Create an online evaluation config (501 unless supported)',
        body: OnlineConfigRequest,
        response: { 201: OnlineConfig },
      },
    },
    async (request, reply) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'online_configs', WHAT);
      const created = await requireMethod(provider, 'createOnlineConfig', WHAT)(request.body);
      const { ledger, who } = ownership(request);
      await ledger.record('online_config', provider.name, created.config_id, who, () =>
        requireMethod(provider, 'deleteOnlineConfig', WHAT)(created.config_id),
      );
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/online-configs',
    {
      schema: {
        tags,
        summary: 'List online evaluation configs (501 unless supported)',
        response: { 200: OnlineConfigList },
      },
    },
    async (request) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'online_configs', WHAT);
      return requireMethod(provider, 'listOnlineConfigs', WHAT)();
    },
  );

  app.get(
    '/online-configs/:config_id',
    {
      schema: {
        tags,
        summary: 'An online evaluation config (501 unless supported)',
        params: ConfigParams,
        response: { 200: OnlineConfig },
      },
    },
    async (request) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'online_configs', WHAT);
      const cfg = await requireMethod(provider, 'getOnlineConfig', WHAT)(request.params.config_id);
      if (!cfg) throw missing(request.params.config_id);
      return cfg;
    },
  );

  app.delete(
    '/online-configs/:config_id',
    {
      schema: {
        tags,
        summary: 'Delete an online evaluation config (501 unless supported)',
        params: ConfigParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const provider = evaluationsFor(request);
      requireCapability(provider, 'online_configs', WHAT);
      const { config_id } = request.params;
      if (!(await requireMethod(provider, 'getOnlineConfig', WHAT)(config_id))) throw missing(config_id);
      const { ledger, who } = ownership(request);
      await ledger.assertChange('online_config', provider.name, config_id, who);
      if (!(await requireMethod(provider, 'deleteOnlineConfig', WHAT)(config_id))) throw missing(config_id);
      await ledger.forget('online_config', provider.name, config_id);
      return reply.code(204).send(null);
    },
  );
};

export default onlineConfigs;
