import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { navHtml } from './nav.ts';

const Html = Type.String({ description: 'text/html' });

/**
 * `/` for clients that do not ask for HTML (a browser is sent to the console at /ui/ by plugins/console). It says what the service is and
 * links to the registry page, the API docs, the OpenAPI document, readiness and the login, so no first visit
 * ends on a JSON 404.
 */
function landingHtml(surfaces: readonly string[]): string {
  const registry = surfaces.includes('registry');
  const platform = surfaces.includes('platform');
  const item = (href: string, label: string, what: string) => `<li><a href="${href}">${label}</a>: ${what}</li>`;
  const items = [
    item('/ui/', 'Web console', 'the browser UI for both surfaces (a browser opening / is sent there)'),
    registry ? item('/api/', 'Registry', 'the MCP servers registered here, their state and health') : '',
    registry
      ? item(
          '/login',
          'Sign in',
          'as the local admin (password in DATA_DIR/admin_password) or through the identity provider',
        )
      : '',
    registry ? item('/api/tokens', 'Tokens', 'mint an access token for scripts and MCP clients') : '',
    item(
      '/docs',
      'API docs',
      `every route of ${[registry && 'the registry', platform && 'the platform gateway (/api/v1)'].filter(Boolean).join(' and ')}, with try-it-out`,
    ),
    item('/openapi.json', 'OpenAPI', 'the OpenAPI 3.1 document the docs are made from'),
    item('/readyz', 'Readiness', 'each provider and the store, checked now'),
  ].join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard</title></head>
<body>${navHtml({ registry })}<main><h1>Switchboard</h1>
<p>A registry of MCP servers, A2A agents and skills, and an agent platform gateway, in one service.</p>
<ul>${items}</ul>
<p>New here? The README's <em>First calls</em> walk through both surfaces from a shell; docs/ has the reference.</p>
</main></body></html>`;
}

export default async function landingPage(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const html = landingHtml(app.sb.settings.surfaces);
  app.get(
    '/',
    {
      schema: {
        tags: ['ops'],
        summary: 'Landing page (HTML) linking the registry page, the API docs, readiness and the login',
        response: { 200: Html },
      },
    },
    async (_request, reply) => reply.type('text/html; charset=utf-8').send(html),
  );
}
