import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../../core/errors.ts';
import type { MetadataFilter } from '../../../core/metadata-denylist.ts';
import {
  MemoryRecord,
  SearchHit,
  SearchRequest,
  StoreRequest,
  type MemoryProvider,
} from '../../../core/primitives/memory.ts';
import { requireCapability } from '../capability.ts';
import { canUseNamespace, checkNamespace } from './access.ts';

const Ns = Type.Object({ namespace: Type.String({ minLength: 1, maxLength: 256 }) });
const NsKey = Type.Object({
  namespace: Type.String({ minLength: 1, maxLength: 256 }),
  key: Type.String({ minLength: 1 }),
});
const tags = ['memory'];

/** Key-value records: store, retrieve, list, search, delete, namespaces (spec 4.8). */
export function recordRoutes(fastify: FastifyInstance, strip: MetadataFilter): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const mem = (headers: Record<string, string | string[] | undefined>) =>
    app.sb.providers.resolve<MemoryProvider>('memory', headers);
  const view = strip.view<MemoryRecord>('memory');

  app.get(
    '/namespaces',
    {
      schema: {
        tags,
        summary: 'Known namespaces',
        response: { 200: Type.Object({ namespaces: Type.Array(Type.String()) }) },
      },
    },
    async (request) => {
      const all = await mem(request.headers).namespaces();
      // Other users' and other groups' namespaces are not listed to non-admins.
      const visible = all.filter((ns) => canUseNamespace(request.principal, ns));
      return { namespaces: visible };
    },
  );

  app.post(
    '/:namespace',
    {
      schema: {
        tags,
        summary: 'Store a record (creates or replaces the key)',
        params: Ns,
        body: StoreRequest,
        response: { 201: MemoryRecord },
      },
    },
    async (request, reply) => {
      const { namespace } = request.params;
      checkNamespace(request, namespace);
      const r = await mem(request.headers).store(namespace, request.body);
      return reply.status(201).send(view(r));
    },
  );

  app.get(
    '/:namespace/:key',
    { schema: { tags, summary: 'Retrieve a record by key', params: NsKey, response: { 200: MemoryRecord } } },
    async (request) => {
      const { namespace, key } = request.params;
      checkNamespace(request, namespace);
      const r = await mem(request.headers).retrieve(namespace, key);
      if (!r) throw notFound('SB_ERR_MEMORY_NOT_FOUND', `No record '${key}' in namespace '${namespace}'`);
      return view(r);
    },
  );

  app.get(
    '/:namespace',
    {
      schema: {
        tags,
        summary: 'List records, newest first',
        params: Ns,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          offset: Type.Integer({ minimum: 0, default: 0 }),
        }),
        response: { 200: Type.Object({ records: Type.Array(MemoryRecord), total: Type.Integer() }) },
      },
    },
    async (request) => {
      const { namespace } = request.params;
      checkNamespace(request, namespace);
      const { limit, offset } = request.query;
      const page = await mem(request.headers).list(namespace, { limit, offset });
      return { records: page.records.map(view), total: page.total };
    },
  );

  app.post(
    '/:namespace/search',
    {
      schema: {
        tags,
        summary: 'Search records (lexical BM25; fused with semantic ranking when embeddings are configured)',
        params: Ns,
        body: SearchRequest,
        response: { 200: Type.Object({ results: Type.Array(SearchHit) }) },
      },
    },
    async (request) => {
      const { namespace } = request.params;
      checkNamespace(request, namespace);
      const provider = mem(request.headers);
      requireCapability(provider, 'search', 'search', (v) => v !== 'none' && v !== undefined && v !== false);
      const hits = await provider.search(namespace, request.body);
      return { results: hits.map((h) => ({ record: view(h.record), score: h.score })) };
    },
  );

  app.delete(
    '/:namespace/:key',
    { schema: { tags, summary: 'Delete a record', params: NsKey, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const { namespace, key } = request.params;
      checkNamespace(request, namespace);
      if (!(await mem(request.headers).delete(namespace, key)))
        throw notFound('SB_ERR_MEMORY_NOT_FOUND', `No record '${key}' in namespace '${namespace}'`);
      return reply.status(204).send(null);
    },
  );
}
