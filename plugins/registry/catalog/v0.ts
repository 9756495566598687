import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { notFound } from '../../../core/errors.ts';
import type { UserContext } from '../auth/context.ts';
import { mayReadHeaders, serverVisible } from './access.ts';
import { showBackend, type Catalog } from './context.ts';
import type { ServerRecord } from './records.ts';
import { SECURITY_PENDING } from './scan.ts';
import { currentUser } from './server-actions.ts';
import { ServerDetail, serverDetail } from './server-views.ts';
import { ErrorResponses } from './shared-schemas.ts';

/**
 * MCP registry API v0 (spec 4.2). Names are reverse-DNS `<namespace>/<path>`;
 * the list is ordered by name and the cursor is the last name of the previous
 * page. A server the caller cannot see answers 404, never 403, so names do not leak.
 */

const tags = ['registry: v0'];
const Resource = Type.Object({ uri: Type.String(), mimeType: Type.String() });
const Remote = Type.Object({ type: Type.String(), url: Type.String() });
const V0Server = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  version: Type.String(),
  status: Type.String(),
  homepage: Type.Optional(Type.String()),
  resources: Type.Array(Resource),
  remotes: Type.Array(Remote),
  is_latest: Type.Optional(Type.Boolean()),
  _meta: Type.Object({
    path: Type.String(),
    is_enabled: Type.Boolean(),
    health_status: Type.String(),
    tags: Type.Array(Type.String()),
  }),
});
const V0Detail = Type.Composite([V0Server, Type.Object({ details: ServerDetail })]);

export function v0Name(catalog: Catalog, path: string): string {
  return `${catalog.config.v0_namespace}/${path.slice(1)}`;
}

export function baseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** Where a client connects: the backend in registry-only mode, the gateway's route otherwise. */
export function endpointUrl(catalog: Catalog, s: ServerRecord, base: string): string {
  return catalog.config.registryOnly ? (s.mcp_endpoint ?? s.proxy_pass_url) : `${base}${s.path}/mcp`;
}

function v0Item(catalog: Catalog, s: ServerRecord, base: string) {
  const url = endpointUrl(catalog, s, base);
  return {
    id: s.id,
    name: v0Name(catalog, s.path),
    description: s.description,
    version: s.version ?? s.versions.at(-1)?.version ?? 'v1.0.0',
    status: s.status,
    homepage: s.provider_url,
    resources: [{ uri: url, mimeType: 'application/json' }],
    remotes: [{ type: s.supported_transports[0] ?? 'streamable-http', url }],
    _meta: { path: s.path, is_enabled: s.is_enabled, health_status: s.health_status, tags: s.tags },
  };
}

/** Listed: visible to the caller and not held for security review. */
export function listed(user: UserContext, s: ServerRecord): boolean {
  return !s.tags.includes(SECURITY_PENDING) && serverVisible(user, s);
}

export default async function v0Routes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const prefix = () => `${catalog.config.v0_namespace}/`;

  const lookup = (user: UserContext, name: string): ServerRecord => {
    const p = prefix();
    const s = name.startsWith(p) ? catalog.servers.get(`/${name.slice(p.length)}`) : undefined;
    if (!s || !listed(user, s)) throw notFound('SB_ERR_REGISTRY_SERVER_NOT_FOUND', `No server named ${name}`);
    return s;
  };

  app.get(
    '/v0/servers',
    {
      schema: {
        tags,
        summary: 'Servers, by name; cursor = last name of the previous page',
        querystring: Type.Object({
          cursor: Type.Optional(Type.String()),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
        }),
        response: {
          200: Type.Object({
            servers: Type.Array(V0Server),
            _meta: Type.Object({
              pagination: Type.Object({
                hasMore: Type.Boolean(),
                nextCursor: Type.Union([Type.String(), Type.Null()]),
                count: Type.Integer(),
              }),
            }),
          }),
          ...ErrorResponses,
        },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const { cursor, limit } = request.query;
      const all = catalog.servers.list();
      // Names sort as paths do (one namespace prefix), so the cursor is found by binary search.
      let lo = 0;
      if (cursor) {
        const after = cursor.startsWith(prefix())
          ? `/${cursor.slice(prefix().length)}`
          : cursor < prefix()
            ? ''
            : '\uffff';
        let hi = all.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (all[mid].path <= after) lo = mid + 1;
          else hi = mid;
        }
      }
      const base = baseUrl(request);
      const page: ReturnType<typeof v0Item>[] = [];
      let i = lo;
      for (; i < all.length && page.length < limit; i++)
        if (listed(user, all[i])) page.push(v0Item(catalog, all[i], base));
      let hasMore = false;
      for (; i < all.length; i++) {
        if (listed(user, all[i])) {
          hasMore = true;
          break;
        }
      }
      return {
        servers: page,
        _meta: { pagination: { hasMore, nextCursor: hasMore ? page.at(-1)!.name : null, count: page.length } },
      };
    },
  );

  app.get(
    '/v0/servers/:serverName/versions',
    {
      schema: {
        tags,
        summary: 'Versions of a server (URL-encoded reverse-DNS name)',
        params: Type.Object({ serverName: Type.String() }),
        response: { 200: Type.Array(V0Server), ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const s = lookup(user, request.params.serverName);
      const item = v0Item(catalog, s, baseUrl(request));
      const last = s.versions.length - 1;
      return s.versions.map((v, i) => ({ ...item, version: v.version, status: v.status, is_latest: i === last }));
    },
  );

  app.get(
    '/v0/servers/:serverName/versions/:version',
    {
      schema: {
        tags,
        summary: "One version with full details and tools; 'latest' selects the newest",
        params: Type.Object({ serverName: Type.String(), version: Type.String() }),
        response: { 200: V0Detail, ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const s = lookup(user, request.params.serverName);
      const want = request.params.version;
      const idx = want === 'latest' ? s.versions.length - 1 : s.versions.findIndex((v) => v.version === want);
      if (idx < 0)
        throw notFound('SB_ERR_REGISTRY_VERSION_NOT_FOUND', `${v0Name(catalog, s.path)} has no version ${want}`);
      const v = s.versions[idx];
      return {
        ...v0Item(catalog, s, baseUrl(request)),
        version: v.version,
        status: v.status,
        is_latest: idx === s.versions.length - 1,
        details: serverDetail(s, {
          showBackend: showBackend(catalog, user),
          stars: catalog.ratings.average(`server:${s.path}`),
          revealHeaders: mayReadHeaders(user, s.path),
        }),
      };
    },
  );
}
