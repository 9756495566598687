import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { badRequest, forbidden, unavailable, unprocessable } from '../../../../core/errors.ts';
import { canAccessServer, hasPermission, requireAdmin, requireUser } from '../access.ts';
import type { UserContext } from '../context.ts';
import type { RegistryAuth } from '../registry-auth.ts';
import { MintLimiter } from '../mint-limit.ts';
import { navHtml } from '../../../pages/nav.ts';
import { normalizeResourceId } from '../resource-binding.ts';
import { mintSelfToken, type ResourceType } from '../self-tokens.ts';

const RESOURCE_TYPES = ['server', 'virtual_server', 'agent', 'skill'] as const;

const GenerateBody = Type.Object(
  {
    requested_scopes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 100 })),
    expires_in_hours: Type.Optional(Type.Integer({ description: '1 to 24; default 8' })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    resource: Type.Optional(
      Type.Object(
        {
          type: Type.Union(RESOURCE_TYPES.map((t) => Type.Literal(t))),
          // Checked in the handler: Ajv's type coercion would turn a number into a string.
          id: Type.Unknown({ description: 'Path or slug of the resource (string)' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.Optional(Type.String()),
  scope: Type.String(),
});
const ErrorBody = Type.Object({ detail: Type.Unknown(), code: Type.String() });

/** Rule 7: the caller must be able to reach what the token is bound to (the catalog's answer first, for what it holds). */
function canReach(
  user: UserContext,
  type: ResourceType,
  id: string,
  visible?: RegistryAuth['resourceVisible'],
): boolean {
  if (user.is_admin) return true;
  const known = visible?.(user, type, id);
  if (known !== undefined) return known;
  switch (type) {
    case 'server':
    case 'virtual_server':
      return canAccessServer(user, id) || hasPermission(user, 'list_service', `/${id}`);
    case 'agent':
      return hasPermission(user, 'get_agent', `/${id}`) || hasPermission(user, 'list_agents', `/${id}`);
    case 'skill':
      return (
        hasPermission(user, 'list_service', `/${id}`) ||
        hasPermission(user, 'list_service', `/skills/${id.replace(/^skills\//, '')}`)
      );
  }
}

const TOKEN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Access tokens - MCP Registry</title></head>
<body>${navHtml()}<main><h1>Generate an access token</h1>
<form id="f">
<label>Scopes (space-separated, empty for all of yours) <input name="scopes"></label>
<label>Expires in hours (1-24) <input name="hours" type="number" min="1" max="24" value="8"></label>
<label>Description <input name="description" maxlength="500"></label>
<button type="submit">Generate</button>
</form>
<pre id="out"></pre>
<script>
const csrf = (document.cookie.match(/(?:^|; )mcp_gateway_csrf=([^;]*)/) || [])[1] || '';
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const d = new FormData(e.target);
  const body = { expires_in_hours: Number(d.get('hours')), description: d.get('description') || undefined };
  const s = String(d.get('scopes') || '').trim();
  if (s) body.requested_scopes = s.split(/\\s+/);
  const r = await fetch('/api/tokens/generate', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': decodeURIComponent(csrf) }, body: JSON.stringify(body) });
  document.getElementById('out').textContent = JSON.stringify(await r.json(), null, 2);
});
</script></main></body></html>`;

/** Self-signed token minting (spec 4.4) and the admin's M2M token from the IdP. */
export default async function tokenRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { authenticator, settings, idp } = app.registryAuth;
  const limiter = new MintLimiter(app.sb.store, settings.token_mint_limit_per_hour);

  app.post(
    '/api/tokens/generate',
    {
      schema: {
        tags: ['tokens'],
        summary: 'Mint a self-signed access token (a subset of your scopes, 1-24 h, optionally bound to one resource)',
        body: GenerateBody,
        response: {
          200: TokenResponse,
          400: ErrorBody,
          401: ErrorBody,
          403: ErrorBody,
          422: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (request) => {
      const user = requireUser(request);
      const body = request.body;
      const hours = body.expires_in_hours ?? 8;
      if (hours < 1 || hours > 24)
        throw badRequest('SB_ERR_TOKEN_EXPIRY', `expires_in_hours must be between 1 and 24 (got ${hours})`);

      let scopes = user.scopes;
      if (body.requested_scopes !== undefined) {
        if (body.requested_scopes.length === 0)
          throw badRequest('SB_ERR_TOKEN_SCOPES', 'requested_scopes is empty: omit it to get all of your scopes');
        const extra = body.requested_scopes.filter((s) => !user.scopes.includes(s));
        if (extra.length)
          throw forbidden(
            'SB_ERR_TOKEN_SCOPES_EXCEED',
            `Requested scopes exceed yours: ${extra.join(', ')} (you hold: ${user.scopes.join(', ') || 'none'})`,
          );
        scopes = [...new Set(body.requested_scopes)];
      }

      let resource: { type: ResourceType; id: string } | undefined;
      if (body.resource) {
        const rawId = body.resource.id;
        if (typeof rawId !== 'string') {
          throw unprocessable('SB_ERR_VALIDATION', [
            { loc: ['body', 'resource', 'id'], msg: 'must be a string', type: 'type' },
          ]);
        }
        resource = { type: body.resource.type, id: normalizeResourceId(rawId) };
        const narrowed = authenticator.build({ ...user, scopes, expiresAt: undefined });
        const visible = app.registryAuth.resourceVisible;
        if (
          !canReach(user, resource.type, resource.id, visible) ||
          !canReach(narrowed, resource.type, resource.id, visible)
        ) {
          throw forbidden(
            'SB_ERR_TOKEN_RESOURCE_FORBIDDEN',
            `You cannot access ${resource.type} '${resource.id}', so you cannot mint a token bound to it`,
          );
        }
      }

      await limiter.take(user.username);
      const expiresIn = hours * 3600;
      const token = await mintSelfToken(authenticator.secretKey, {
        username: user.username,
        groups: user.groups,
        scopes,
        expiresInSeconds: expiresIn,
        resource,
      });
      request.log.info(
        {
          username: user.username,
          description: body.description ?? null,
          token_kind: resource ? 'resource' : 'user',
          resource,
          scopes,
          expires_in_hours: hours,
        },
        'self-signed token minted',
      );
      return { access_token: token, token_type: 'Bearer' as const, expires_in: expiresIn, scope: scopes.join(' ') };
    },
  );

  app.get(
    '/api/tokens',
    {
      schema: {
        tags: ['tokens'],
        summary: 'Token form (HTML)',
        response: { 200: Type.String({ description: 'text/html' }), 302: Type.Null() },
      },
    },
    async (request, reply) => {
      if (!request.user) return reply.redirect('/api/auth/login', 302);
      return reply.type('text/html; charset=utf-8').send(TOKEN_PAGE);
    },
  );

  app.get(
    '/api/admin/tokens',
    {
      schema: {
        tags: ['tokens'],
        summary: 'An M2M access token from the identity provider (client credentials); admins only',
        response: {
          200: Type.Object({
            access_token: Type.String(),
            token_type: Type.String(),
            expires_in: Type.Optional(Type.Integer()),
            scope: Type.Optional(Type.String()),
            provider: Type.String(),
          }),
          401: ErrorBody,
          403: ErrorBody,
          502: ErrorBody,
          503: ErrorBody,
        },
      },
    },
    async (request) => {
      const user = requireAdmin(request);
      if (!idp)
        throw unavailable(
          'SB_ERR_IDP_NOT_CONFIGURED',
          'No identity provider is configured (AUTH_PROVIDER / registry.idp), so there is no M2M token to give',
        );
      const t = await idp.clientCredentials();
      request.log.info({ username: user.username, provider: idp.kind }, 'M2M token issued to admin');
      return { ...t, provider: idp.kind };
    },
  );
}
