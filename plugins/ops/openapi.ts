import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

/**
 * /openapi.json and /docs come from the TypeBox schemas on the routes; nothing
 * is written by hand. Registered before any route so every route is seen.
 */
export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Switchboard', version: '0.1.0', description: 'MCP/A2A registry and agent platform gateway' },
        components: {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer' },
            apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
            session: { type: 'apiKey', in: 'cookie', name: 'mcp_gateway_session' },
          },
        },
      },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'switchboard-openapi' },
);
