import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { conflict, notFound } from '../../../core/errors.ts';
import {
  CreateCredentialProviderRequest,
  CredentialProvider,
  UpdateCredentialProviderRequest,
  redactSecrets,
  type IdentityProvider,
} from '../../../core/primitives/identity.ts';
import { requireCapability } from '../capability.ts';
import { ownership } from '../ownership.ts';

const tags = ['identity'];
const NameParams = Type.Object({ name: Type.String({ minLength: 1 }) });

/** Secret config values are write-only: redacted again here whatever the provider returns. */
const shown = (p: CredentialProvider): CredentialProvider => ({ ...p, config: redactSecrets(p.config) });
const missing = (name: string) =>
  notFound('SB_ERR_IDENTITY_PROVIDER_NOT_FOUND', `Credential provider '${name}' not found`);

/** /api/v1/identity/credential-providers CRUD. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const identityFor = (headers: Record<string, string | string[] | undefined>) => {
    const p = app.sb.providers.resolve<IdentityProvider>('identity', headers);
    requireCapability(p, 'credential_providers', 'credential providers');
    return p;
  };
  /** 404 when absent, 403 unless the caller created it or is an admin (plugins/platform/ownership.ts). */
  const changeable = async (request: FastifyRequest, provider: IdentityProvider, name: string) => {
    if (!(await provider.getCredentialProvider(name))) throw missing(name);
    const { ledger, who } = ownership(request);
    await ledger.assertChange('credential_provider', provider.name, name, who);
  };

  app.post(
    '/',
    {
      schema: {
        tags,
        summary: 'Create a credential provider',
        body: CreateCredentialProviderRequest,
        response: { 201: CredentialProvider },
      },
    },
    async (request, reply) => {
      const provider = identityFor(request.headers);
      const created = await provider.createCredentialProvider(request.body);
      if (!created)
        throw conflict(
          'SB_ERR_IDENTITY_PROVIDER_EXISTS',
          `Credential provider '${request.body.name}' already exists; update it with PUT instead`,
        );
      const { ledger, who } = ownership(request);
      await ledger.record('credential_provider', provider.name, created.name, who, () =>
        provider.deleteCredentialProvider(created.name),
      );
      return reply.code(201).send(shown(created));
    },
  );

  app.get(
    '/',
    {
      schema: {
        tags,
        summary: 'List credential providers',
        response: { 200: Type.Object({ credential_providers: Type.Array(CredentialProvider) }) },
      },
    },
    async (request) => ({
      credential_providers: (await identityFor(request.headers).listCredentialProviders()).map(shown),
    }),
  );

  app.get(
    '/:name',
    { schema: { tags, summary: 'One credential provider', params: NameParams, response: { 200: CredentialProvider } } },
    async (request) => {
      const p = await identityFor(request.headers).getCredentialProvider(request.params.name);
      if (!p) throw missing(request.params.name);
      return shown(p);
    },
  );

  app.put(
    '/:name',
    {
      schema: {
        tags,
        summary: 'Replace the config of a credential provider',
        params: NameParams,
        body: UpdateCredentialProviderRequest,
        response: { 200: CredentialProvider },
      },
    },
    async (request) => {
      const provider = identityFor(request.headers);
      await changeable(request, provider, request.params.name);
      const p = await provider.updateCredentialProvider(request.params.name, request.body);
      if (!p) throw missing(request.params.name);
      return shown(p);
    },
  );

  app.delete(
    '/:name',
    { schema: { tags, summary: 'Delete a credential provider', params: NameParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const provider = identityFor(request.headers);
      await changeable(request, provider, request.params.name);
      if (!(await provider.deleteCredentialProvider(request.params.name))) throw missing(request.params.name);
      await ownership(request).ledger.forget('credential_provider', provider.name, request.params.name);
      return reply.code(204).send(null);
    },
  );
};

export default routes;
