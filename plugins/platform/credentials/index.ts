import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import { callerCredentials } from '../credentials-headers.ts';
import { loadSecrets } from '../../../core/secrets.ts';
import { credentialVault } from './attributes.ts';
import { credentialsSettings, type CredentialsSettings } from './settings.ts';
import { oidcSource } from './oidc-source.ts';
import type { AuthBackend } from '../../../core/primitives/auth.ts';

const tags = ['credentials'];
const ATTRIBUTE_NAME = '^[A-Za-z0-9_.:-]{1,128}$';
const MaskedAttributes = Type.Object({
  attributes: Type.Record(
    Type.String(),
    Type.String({ description: 'Masked: only the last 4 characters are visible' }),
  ),
});
const WriteAttributes = Type.Object({
  // Spelled out because a TypeBox Record drops the key pattern.
  attributes: Type.Unsafe<Record<string, string>>({
    type: 'object',
    patternProperties: { [ATTRIBUTE_NAME]: Type.String({ maxLength: 8192 }) },
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 100,
    description: "Attribute names: 1-128 of letters, digits, '_', '.', ':', '-'",
  }),
});
const Source = Type.Union([
  Type.Literal('oidc'),
  Type.Literal('headers'),
  Type.Literal('server'),
  Type.Literal('none'),
]);
const Status = Type.Object({
  source: Source,
  aws_configured: Type.Boolean(),
  server_credentials: Type.Union([Type.Literal('never'), Type.Literal('fallback'), Type.Literal('always')]),
  required_credentials: Type.Array(Type.String()),
});

/**
 * Where this request's provider credentials come from (spec 5.7): the server's
 * own in `always` mode; otherwise pass-through headers, then the caller's
 * profile (`oidc`: the identity provider's userinfo attributes when
 * platform.credentials.oidc is set, or attributes stored here with PUT), then
 * the server's in `fallback` mode.
 */
function resolveSource(
  settings: CredentialsSettings,
  hasHeaders: boolean,
  hasProfile: boolean,
): 'oidc' | 'headers' | 'server' | 'none' {
  if (settings.server_credentials === 'always') return 'server';
  if (hasHeaders) return 'headers';
  if (hasProfile) return 'oidc';
  return settings.server_credentials === 'fallback' ? 'server' : 'none';
}

// The reference answers writes and deletes with {status}; its client reads them as JSON.
const WriteAnswer = Type.Object({
  status: Type.Literal('updated'),
  attributes: MaskedAttributes.properties.attributes,
});
const DeleteAnswer = Type.Object({ status: Type.Literal('deleted'), key: Type.String() });

/** /api/v1/credentials: the caller's own credential attributes, never shown unmasked. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  // Validated at registration so a bad section stops startup with the key named.
  const settings = credentialsSettings(app.sb.settings.config.platform);
  const vault = credentialVault(app.sb.store, loadSecrets(app.sb.settings.dataDir, process.env).encryptionKey);
  const principalId = (request: { principal?: { id: string } }) => request.principal!.id;
  const idp =
    settings.oidc &&
    oidcSource(settings.oidc, () => {
      const auth = app.sb.providers.get<AuthBackend>('auth');
      const issuer = auth?.type === 'jwt' ? auth.publicConfig().issuer : undefined;
      return typeof issuer === 'string' ? issuer : undefined;
    });
  /** The caller's OIDC access token: a compact JWS in Authorization (API keys and cookies have no userinfo). */
  const oidcToken = (headers: Record<string, string | string[] | undefined>) => {
    const raw = headers.authorization;
    const m = typeof raw === 'string' ? /^bearer\s+(\S+)$/i.exec(raw) : null;
    return m && m[1].split('.').length === 3 ? m[1] : undefined;
  };
  /** Whether the caller's identity-provider profile, or the attributes stored here for them, hold credentials. */
  const hasProfile = async (request: FastifyRequest) => {
    const token = idp ? oidcToken(request.headers) : undefined;
    if (token && idp && Object.keys(await idp.resolve(token)).length > 0) return true;
    return vault.has(principalId(request));
  };

  app.get(
    '/',
    { schema: { tags, summary: 'Masked credential attributes of the caller', response: { 200: MaskedAttributes } } },
    async (request) => ({
      attributes: await vault.masked(principalId(request)),
    }),
  );

  app.put(
    '/',
    {
      schema: {
        tags,
        summary: 'Write credential attributes of the caller (merged with those stored)',
        body: WriteAttributes,
        response: { 200: WriteAnswer },
      },
    },
    async (request) => {
      return {
        status: 'updated' as const,
        attributes: await vault.write(principalId(request), request.body.attributes),
      };
    },
  );

  app.get(
    '/status',
    { schema: { tags, summary: 'How credentials are resolved for the caller', response: { 200: Status } } },
    async (request) => {
      const creds = callerCredentials(request.headers);
      const hasHeaders = Object.keys(creds.service).length > 0 || Boolean(creds.cloud?.accessKeyId);
      // The profile is read only when it can decide the answer (not in `always` mode, not when headers win).
      const profile = settings.server_credentials !== 'always' && !hasHeaders && (await hasProfile(request));
      return {
        source: resolveSource(settings, hasHeaders, profile),
        aws_configured: Boolean(settings.cloud_role_arn),
        server_credentials: settings.server_credentials,
        required_credentials: settings.required_credentials,
      };
    },
  );

  app.delete(
    '/:key',
    // 200 with a body, not 204: the reference client parses the answer of this delete as JSON (README, Compatibility).
    {
      schema: {
        tags,
        summary: 'Delete one credential attribute',
        params: Type.Object({ key: Type.String({ minLength: 1 }) }),
        response: { 200: DeleteAnswer },
      },
    },
    async (request) => {
      const { key } = request.params;
      if (!(await vault.remove(principalId(request), key)))
        throw notFound('SB_ERR_CREDENTIALS_NOT_FOUND', `No credential attribute '${key}' is stored for you`);
      return { status: 'deleted' as const, key };
    },
  );
};

export default routes;
