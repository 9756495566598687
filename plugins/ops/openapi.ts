import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { finishDocument } from './openapi-document.ts';
import { docsRequestInterceptor } from './docs-interceptor.ts';

/**
 * /openapi.json and /docs come from the TypeBox schemas on the routes; what
 * follows from where a route lives (security, operationId, error responses,
 * platform headers) is added once by finishDocument. Registered before any
 * route so every route is seen.
 */
export default fp(
  async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Switchboard', version: '0.1.0', description: 'MCP/A2A registry and agent platform gateway' },
      },
      transformObject: (documentObject) =>
        finishDocument(
          'openapiObject' in documentObject ? (documentObject.openapiObject as Record<string, unknown>) : {},
        ) as never,
    });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      // persistAuthorization: a token typed into Authorize survives a reload of the page.
      uiConfig: {
        persistAuthorization: true,
        docExpansion: 'none',
        requestInterceptor: docsRequestInterceptor as never,
      },
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'switchboard-openapi' },
);
