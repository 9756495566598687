import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ApiKeyRequest,
  ApiKeyResult,
  TokenRequest,
  TokenResult,
  WorkloadTokenRequest,
  WorkloadTokenResult,
  type IdentityCaller,
  type IdentityProvider,
} from '../../../core/primitives/identity.ts';
import type { FastifyRequest } from 'fastify';
import { badGateway, isSwitchboardError } from '../../../core/errors.ts';
import { requireCapability } from '../capability.ts';
import { ownership } from '../ownership.ts';
import credentialProviders from './credential-providers.ts';
import workloadIdentities from './workload-identities.ts';
import authComplete from './auth-complete.ts';

const tags = ['identity'];

/** Who asks: the principal, and the bearer token of the request (what TOKEN_EXCHANGE trades when no subject_token is given). */
function callerOf(request: FastifyRequest): IdentityCaller {
  const raw = request.headers.authorization;
  const bearer = typeof raw === 'string' && /^bearer /i.test(raw) ? raw.slice(7).trim() || undefined : undefined;
  return { principal: request.principal, bearer };
}

/** A provider that fails without a coded error is a backend failure (502), not a bug of ours (500). */
async function backend<T>(p: IdentityProvider, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isSwitchboardError(err)) throw err;
    throw badGateway(
      'SB_ERR_IDENTITY_BACKEND_FAILED',
      `The identity provider '${p.name}' failed during ${what}: ${err instanceof Error ? err.message : String(err)}`,
      err,
    );
  }
}

/**
 * Tokens and keys drawn from a credential provider, and workload tokens, are for
 * the record's owner and admins (plugins/platform/ownership.ts). A name the
 * provider does not know is left to the provider's own 404.
 */
async function ownerUse(
  request: FastifyRequest,
  p: IdentityProvider,
  kind: 'credential_provider' | 'workload_identity',
  name: string,
): Promise<void> {
  const { ledger, who } = ownership(request);
  if (who.is_admin) return;
  const exists =
    kind === 'credential_provider'
      ? p.capabilities.credential_providers && (await p.getCredentialProvider(name))
      : p.capabilities.workload_identities && (await p.getWorkloadIdentity(name));
  if (exists) await ledger.assertOwnerUse(kind, p.name, name, who);
}

/** /api/v1/identity: token exchange (needs a real backend) and the records that configure it. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const identityFor = (headers: Record<string, string | string[] | undefined>) =>
    app.sb.providers.resolve<IdentityProvider>('identity', headers);

  app.post(
    '/token',
    {
      schema: {
        tags,
        summary: 'OAuth2 token for a credential provider',
        body: TokenRequest,
        response: { 200: TokenResult },
      },
    },
    async (request) => {
      const p = identityFor(request.headers);
      requireCapability(p, 'tokens', 'token issuance');
      await ownerUse(request, p, 'credential_provider', request.body.credential_provider);
      return backend(p, 'token issuance', () => p.getToken(request.body, callerOf(request)));
    },
  );

  app.post(
    '/api-key',
    {
      schema: {
        tags,
        summary: 'API key held by a credential provider',
        body: ApiKeyRequest,
        response: { 200: ApiKeyResult },
      },
    },
    async (request) => {
      const p = identityFor(request.headers);
      requireCapability(p, 'api_keys', 'API key retrieval');
      await ownerUse(request, p, 'credential_provider', request.body.credential_provider);
      return backend(p, 'API key retrieval', () => p.getApiKey(request.body, callerOf(request)));
    },
  );

  app.post(
    '/workload-token',
    {
      schema: {
        tags,
        summary: 'Workload access token for an agent identity',
        body: WorkloadTokenRequest,
        response: { 200: WorkloadTokenResult },
      },
    },
    async (request) => {
      const p = identityFor(request.headers);
      requireCapability(p, 'workload_tokens', 'workload token issuance');
      await ownerUse(request, p, 'workload_identity', request.body.workload_name);
      return backend(p, 'workload token issuance', () => p.getWorkloadToken(request.body, callerOf(request)));
    },
  );

  await app.register(credentialProviders, { prefix: '/credential-providers' });
  await app.register(workloadIdentities, { prefix: '/workload-identities' });
  await app.register(authComplete);
};

export default routes;
