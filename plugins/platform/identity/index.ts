import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ApiKeyRequest,
  ApiKeyResult,
  TokenRequest,
  TokenResult,
  WorkloadTokenRequest,
  WorkloadTokenResult,
  type IdentityProvider,
} from '../../../core/primitives/identity.ts';
import { requireCapability } from '../capability.ts';
import credentialProviders from './credential-providers.ts';
import workloadIdentities from './workload-identities.ts';

const tags = ['identity'];

/** /api/v1/identity: token exchange (needs a real backend) and the records that configure it. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const identityFor = (headers: Record<string, string | string[] | undefined>) => app.sb.providers.resolve<IdentityProvider>('identity', headers);

  app.post('/token', { schema: { tags, summary: 'OAuth2 token for a credential provider', body: TokenRequest, response: { 200: TokenResult } } }, async (request) => {
    const p = identityFor(request.headers);
    requireCapability(p, 'tokens', 'token issuance');
    return p.getToken(request.body);
  });

  app.post('/api-key', { schema: { tags, summary: 'API key held by a credential provider', body: ApiKeyRequest, response: { 200: ApiKeyResult } } }, async (request) => {
    const p = identityFor(request.headers);
    requireCapability(p, 'api_keys', 'API key retrieval');
    return p.getApiKey(request.body);
  });

  app.post(
    '/workload-token',
    { schema: { tags, summary: 'Workload access token for an agent identity', body: WorkloadTokenRequest, response: { 200: WorkloadTokenResult } } },
    async (request) => {
      const p = identityFor(request.headers);
      requireCapability(p, 'workload_tokens', 'workload token issuance');
      return p.getWorkloadToken(request.body);
    },
  );

  await app.register(credentialProviders, { prefix: '/credential-providers' });
  await app.register(workloadIdentities, { prefix: '/workload-identities' });
};

export default routes;
