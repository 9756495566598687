import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { notFound } from '../../../core/errors.ts';
import type { UserContext } from '../auth/context.ts';
import { agentVisibility } from './access.ts';
import { agentCard } from './agent-input.ts';
import { AgentCardSchema } from './agent-views.ts';
import type { Catalog } from './context.ts';
import type { ServerRecord } from './records.ts';
import { SECURITY_PENDING } from './scan.ts';
import { currentUser } from './server-actions.ts';
import { ErrorResponses } from './shared-schemas.ts';
import { baseUrl, endpointUrl, listed, v0Name } from './v0.ts';

/**
 * The `/v0.1` discovery API the reference registry's clients call (issue 14):
 * read-only servers in the MCP registry's v0.1 shape (`{servers: [{server,
 * _meta}], metadata: {nextCursor, count}}`) and agents (`{agents, metadata}`,
 * spec 4.1 names `GET /v0.1/agents`). Both page with an opaque cursor, the last
 * path of the previous page (lists are ordered by path). What a caller cannot
 * see is left out of lists and is 404 when named, as on /v0.
 */

const OFFICIAL = 'io.modelcontextprotocol.registry/official';
const Page = Type.Object({
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
});
const PageMeta = Type.Object({ nextCursor: Type.Union([Type.String(), Type.Null()]), count: Type.Integer() });
const Remote = Type.Object({ type: Type.String(), url: Type.String() });
const ServerJson = Type.Object({
  name: Type.String(),
  description: Type.String(),
  version: Type.String(),
  title: Type.String(),
  websiteUrl: Type.Optional(Type.String()),
  remotes: Type.Array(Remote),
});
const ServerResponse = Type.Object({
  server: ServerJson,
  _meta: Type.Object({
    [OFFICIAL]: Type.Object({
      status: Type.String(),
      publishedAt: Type.String(),
      updatedAt: Type.String(),
      isLatest: Type.Boolean(),
    }),
    'io.switchboard/registry': Type.Object({
      path: Type.String(),
      is_enabled: Type.Boolean(),
      health_status: Type.String(),
      tags: Type.Array(Type.String()),
    }),
  }),
});
const ServerList = Type.Object({ servers: Type.Array(ServerResponse), metadata: PageMeta });

/** The items after `cursor` (a path) that pass `keep`, at most `limit`, and the cursor of the next page. */
function page<T extends { path: string }>(
  all: readonly T[],
  cursor: string | undefined,
  limit: number,
  keep: (x: T) => boolean,
): { items: T[]; next: string | null } {
  let lo = 0;
  if (cursor) {
    let hi = all.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (all[mid].path <= cursor) lo = mid + 1;
      else hi = mid;
    }
  }
  const items: T[] = [];
  let i = lo;
  for (; i < all.length && items.length < limit; i++) if (keep(all[i])) items.push(all[i]);
  const more = all.slice(i).some(keep);
  return { items, next: more && items.length > 0 ? items[items.length - 1].path : null };
}

function serverResponse(
  catalog: Catalog,
  s: ServerRecord,
  base: string,
  version = s.versions.find((v) => v.version === s.version) ?? s.versions.at(-1),
) {
  const url = endpointUrl(catalog, s, base);
  const last = s.versions.at(-1);
  return {
    server: {
      name: v0Name(catalog, s.path),
      description: s.description,
      version: version?.version ?? s.version ?? 'v1.0.0',
      title: s.server_name,
      ...(s.provider_url ? { websiteUrl: s.provider_url } : {}),
      remotes: (s.supported_transports.length > 0 ? s.supported_transports : ['streamable-http']).map((type) => ({
        type,
        url,
      })),
    },
    _meta: {
      [OFFICIAL]: {
        status: version?.status ?? s.status,
        publishedAt: version?.registered_at ?? s.registered_at,
        updatedAt: s.updated_at,
        isLatest: !last || version === last,
      },
      'io.switchboard/registry': {
        path: s.path,
        is_enabled: s.is_enabled,
        health_status: s.health_status,
        tags: s.tags,
      },
    },
  };
}

export default async function v01Routes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const tags = ['registry: v0.1'];

  const lookup = (user: UserContext, name: string): ServerRecord => {
    const prefix = `${catalog.config.v0_namespace}/`;
    const s = name.startsWith(prefix) ? catalog.servers.get(`/${name.slice(prefix.length)}`) : undefined;
    if (!s || !listed(user, s)) throw notFound('SB_ERR_REGISTRY_SERVER_NOT_FOUND', `No server named ${name}`);
    return s;
  };
  /** A cursor is a reverse-DNS name (what nextCursor holds) or a path. */
  const pathCursor = (cursor: string | undefined) => {
    const prefix = `${catalog.config.v0_namespace}/`;
    return cursor?.startsWith(prefix) ? `/${cursor.slice(prefix.length)}` : cursor;
  };

  app.get(
    '/v0.1/servers',
    {
      schema: {
        tags,
        summary: 'Servers in the MCP registry v0.1 shape, by name; cursor paging',
        querystring: Page,
        response: { 200: ServerList, ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const { items, next } = page(catalog.servers.list(), pathCursor(request.query.cursor), request.query.limit, (s) =>
        listed(user, s),
      );
      const base = baseUrl(request);
      return {
        servers: items.map((s) => serverResponse(catalog, s, base)),
        metadata: { nextCursor: next && v0Name(catalog, next), count: items.length },
      };
    },
  );

  app.get(
    '/v0.1/servers/:serverName/versions',
    {
      schema: {
        tags,
        summary: 'Versions of a server (URL-encoded reverse-DNS name)',
        params: Type.Object({ serverName: Type.String() }),
        response: { 200: ServerList, ...ErrorResponses },
      },
    },
    async (request) => {
      const s = lookup(currentUser(request), request.params.serverName);
      const base = baseUrl(request);
      return {
        servers: s.versions.map((v) => serverResponse(catalog, s, base, v)),
        metadata: { nextCursor: null, count: s.versions.length },
      };
    },
  );

  app.get(
    '/v0.1/servers/:serverName/versions/:version',
    {
      schema: {
        tags,
        summary: "One version of a server; 'latest' selects the newest",
        params: Type.Object({ serverName: Type.String(), version: Type.String() }),
        response: { 200: ServerResponse, ...ErrorResponses },
      },
    },
    async (request) => {
      const s = lookup(currentUser(request), request.params.serverName);
      const want = request.params.version;
      const v = want === 'latest' ? s.versions.at(-1) : s.versions.find((x) => x.version === want);
      if (!v) throw notFound('SB_ERR_REGISTRY_VERSION_NOT_FOUND', `${v0Name(catalog, s.path)} has no version ${want}`);
      return serverResponse(catalog, s, baseUrl(request), v);
    },
  );

  app.get(
    '/v0.1/agents',
    {
      schema: {
        tags,
        summary: 'Agent cards the caller may see, by path; cursor paging',
        querystring: Type.Composite([Page, Type.Object({ enabled_only: Type.Boolean({ default: false }) })]),
        response: { 200: Type.Object({ agents: Type.Array(AgentCardSchema), metadata: PageMeta }), ...ErrorResponses },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const visible = agentVisibility(user);
      const { cursor, limit, enabled_only } = request.query;
      const keep = (a: Parameters<typeof visible>[0] & { is_enabled: boolean; tags: string[] }) =>
        visible(a) && !a.tags.includes(SECURITY_PENDING) && (!enabled_only || a.is_enabled);
      const { items, next } = page(catalog.agents.index.list(), cursor, limit, keep);
      return { agents: items.map(agentCard), metadata: { nextCursor: next, count: items.length } };
    },
  );
}
