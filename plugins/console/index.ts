import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { notFound } from '../../core/errors.ts';
import { CSP, ConsoleAssets, indexHtml } from './assets.ts';

/**
 * The web console (ui/): /ui/ and every path under it answer the single-page app's index.html (the app
 * routes in the browser), /ui/assets/* the hashed bundle. The spec's HTML routes keep answering scripts as
 * before; a browser (Accept: text/html) asking for them is sent to the matching console page.
 */

/**
 * GET routes whose browser requests go to a console page: the route's URL -> where. These run as onRequest
 * hooks of other plugins' routes, before validation, so params and query are read with a cast.
 */
const TO_CONSOLE: Record<string, (request: FastifyRequest) => string> = {
  '/': () => '/ui/',
  '/api/': (request) => {
    const q = (request.query as { query?: string } | undefined)?.query;
    return q ? `/ui/servers?q=${encodeURIComponent(q)}` : '/ui/servers';
  },
  '/api/edit/:server': (request) => `/ui/edit/${(request.params as { server: string }).server}`,
  '/edit/:server': (request) => `/ui/edit/${(request.params as { server: string }).server}`,
  '/api/tokens': () => '/ui/tokens',
};
/** The login forms: a browser gets the console's login page at the same URL (its ?error= from the IdP kept). */
const LOGIN_PAGES = new Set(['/login', '/api/auth/login']);

const wantsHtml = (request: FastifyRequest) => (request.headers.accept ?? '').includes('text/html');

async function consolePlugin(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const assets = new ConsoleAssets();

  async function sendIndex(reply: FastifyReply) {
    const bundle = await assets.get();
    return (
      reply
        .header('content-security-policy', CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'same-origin')
        // The page names the current bundle's hashes: it must be fetched again after an upgrade.
        .header('cache-control', 'no-cache')
        .type('text/html; charset=utf-8')
        .send(indexHtml(bundle))
    );
  }

  // Browser GETs of the older HTML routes (registered after this, by the surfaces) go to the console.
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (!methods.includes('GET')) return;
    const to = TO_CONSOLE[route.url];
    const login = LOGIN_PAGES.has(route.url);
    if (!to && !login) return;
    const hook: onRequestHookHandler = async (request, reply) => {
      if (request.method !== 'GET' || !wantsHtml(request)) return;
      if (login) return sendIndex(reply);
      return reply.redirect(to!(request), 302);
    };
    route.onRequest = [hook, ...(route.onRequest === undefined ? [] : [route.onRequest].flat())];
  });

  // Not API operations, so kept out of /openapi.json (like /openapi.json itself); their schemas still validate.
  const page = {
    schema: { hide: true, response: { 200: Type.String({ description: 'text/html' }) } },
  };
  // ignoreTrailingSlash: this is also /ui.
  app.get('/ui/', page, async (_request, reply) => sendIndex(reply));
  app.get(
    '/ui/assets/:file',
    {
      schema: {
        hide: true,
        params: Type.Object({ file: Type.String({ maxLength: 100 }) }),
      },
    },
    async (request, reply) => {
      const bundle = await assets.get();
      const file = bundle.files.get(request.params.file);
      if (!file)
        throw notFound(
          'SB_ERR_CONSOLE_ASSET',
          'No such console asset: the page that asked for it is older than this server; reload it',
        );
      const gz = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
      reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .header('vary', 'accept-encoding')
        .type(file.type);
      if (gz) reply.header('content-encoding', 'gzip');
      return reply.send(gz ? file.gzip : file.body);
    },
  );
  // Every other path under /ui is a console page: the app reads the URL and shows it (or its own 404).
  app.get('/ui/*', page, async (_request, reply) => sendIndex(reply));
}

export default fp(consolePlugin, { name: 'switchboard-console' });
