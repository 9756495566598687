import fp from 'fastify-plugin';

/** Echo the request id (made by Fastify when absent) and the correlation id on every response. */
export default fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
      const corr = request.headers['x-correlation-id'];
      reply.header('x-correlation-id', typeof corr === 'string' && corr ? corr : request.id);
    });
  },
  { name: 'switchboard-request-id' },
);
