import fp from 'fastify-plugin';

/** Echo the request id (made by Fastify when absent) and the correlation id on every response. */
export default fp(
  async (app) => {
    // Callback style: this runs on every request and an async hook costs a promise.
    app.addHook('onRequest', (request, reply, done) => {
      const corr = request.headers['x-correlation-id'];
      reply.header('x-request-id', request.id);
      reply.header('x-correlation-id', typeof corr === 'string' && corr ? corr : request.id);
      done();
    });
  },
  { name: 'switchboard-request-id' },
);
