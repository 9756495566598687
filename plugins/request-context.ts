import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';

/** What an incoming X-Request-Id must look like to be kept: a sane token, nothing that could forge a log line. */
const SANE_ID = /^[\w.:@/+=-]{1,128}$/;

/**
 * Fastify's `genReqId`: the caller's X-Request-Id when it is sane, otherwise a
 * new id made of a random per-process prefix and a counter (`3f9a1c2b7d4e-1a`).
 * Ids stay unique across restarts and replicas through the 48-bit prefix, and
 * making one costs a counter increment, where a UUID per request cost entropy
 * and a longer header value for Node to validate on every response.
 */
export function requestIdGenerator(): (req: IncomingMessage) => string {
  const prefix = `${randomBytes(6).toString('hex')}-`;
  let n = 0;
  return (req) => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && SANE_ID.test(given) ? given : prefix + (++n).toString(36);
  };
}

/**
 * What every request gets, in one onRequest hook (each hook is a step of every
 * request, so they are not split by topic):
 * - the request id (made by requestIdGenerator when absent) and the correlation id echoed;
 * - its arrival time, read by ops/metrics.ts for the latency histogram and the completed-request line;
 * - an Upgrade request that a route without a WebSocket handler answers is closed after the answer.
 *   @fastify/websocket routes every upgrade through the router, and only the routes of its own scope
 *   (registry/health) close the socket themselves: elsewhere it would stay open, outside the HTTP
 *   server's keep-alive timeouts. A WebSocket route hijacks its reply, so 'finish' never comes there.
 */
export default fp(
  async (app) => {
    app.decorateRequest('sbStartedAt', 0);
    app.addHook('onRequest', (request, reply, done) => {
      request.sbStartedAt = performance.now();
      const corr = request.headers['x-correlation-id'];
      reply.header('x-request-id', request.id);
      reply.header('x-correlation-id', typeof corr === 'string' && corr ? corr : request.id);
      if (request.headers.upgrade !== undefined) {
        const socket = request.raw.socket;
        reply.raw.once('finish', () => socket.destroy());
      }
      done();
    });
  },
  { name: 'switchboard-request-context' },
);
