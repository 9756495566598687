import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static, TSchema } from '@sinclair/typebox';
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
import type { FastifyRequest, FastifySchema } from 'fastify';
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

/**
 * One way of drawing a secret from the identity provider: the route, the capability it needs, and which
 * owned record (credential provider or workload identity) the request names.
 */
interface Draw<B extends TSchema, R extends TSchema> {
  url: string;
  summary: string;
  body: B;
  result: R;
  capability: string;
  /** For messages: the capability refusal and the backend failure. */
  what: string;
  kind: 'credential_provider' | 'workload_identity';
  name: (body: Static<B>) => string;
  call: (p: IdentityProvider, body: Static<B>, caller: IdentityCaller) => Promise<Static<R>>;
}

/** /api/v1/identity: token exchange (needs a real backend) and the records that configure it. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const identityFor = (headers: Record<string, string | string[] | undefined>) =>
    app.sb.providers.resolve<IdentityProvider>('identity', headers);

  // The three draws differ only in their schemas, capability and record: one handler serves them all.
  // The schema typed as a plain FastifySchema: with generic TypeBox schemas the type provider cannot resolve
  // the reply type, and Draw<B, R> already ties the body and the result to their schemas.
  const draw = <B extends TSchema, R extends TSchema>(d: Draw<B, R>) => {
    const schema: FastifySchema = { tags, summary: d.summary, body: d.body, response: { 200: d.result } };
    app.post(d.url, { schema }, async (request) => {
      const body = request.body as Static<B>;
      const p = identityFor(request.headers);
      requireCapability(p, d.capability, d.what);
      await ownerUse(request, p, d.kind, d.name(body));
      return backend(p, d.what, () => d.call(p, body, callerOf(request)));
    });
  };

  draw({
    url: '/token',
    summary: 'OAuth2 token for a credential provider',
    body: TokenRequest,
    result: TokenResult,
    capability: 'tokens',
    what: 'token issuance',
    kind: 'credential_provider',
    name: (b) => b.credential_provider,
    call: (p, b, caller) => p.getToken(b, caller),
  });
  draw({
    url: '/api-key',
    summary: 'API key held by a credential provider',
    body: ApiKeyRequest,
    result: ApiKeyResult,
    capability: 'api_keys',
    what: 'API key retrieval',
    kind: 'credential_provider',
    name: (b) => b.credential_provider,
    call: (p, b, caller) => p.getApiKey(b, caller),
  });
  draw({
    url: '/workload-token',
    summary: 'Workload access token for an agent identity',
    body: WorkloadTokenRequest,
    result: WorkloadTokenResult,
    capability: 'workload_tokens',
    what: 'workload token issuance',
    kind: 'workload_identity',
    name: (b) => b.workload_name,
    call: (p, b, caller) => p.getWorkloadToken(b, caller),
  });

  await app.register(credentialProviders, { prefix: '/credential-providers' });
  await app.register(workloadIdentities, { prefix: '/workload-identities' });
  await app.register(authComplete);
};

export default routes;
