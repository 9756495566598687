import type { UserContext } from '../auth/context.ts';
import type { FastifyRequest } from 'fastify';
import { csrfTokenFor } from '../auth/session.ts';
import type { ServerRecord } from './records.ts';
import { navHtml } from '../../pages/nav.ts';

/** The CSRF token of the caller's session, when the caller came with the session cookie. */
export function sessionCsrf(request: FastifyRequest): string | undefined {
  return request.session
    ? csrfTokenFor(request.server.registryAuth.authenticator.secretKey, request.session.sid)
    : undefined;
}

/** Minimal server-rendered pages until the web-UI issue replaces them. Every value is escaped. */

export function esc(v: unknown): string {
  return String(v ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head><body>${navHtml()}${body}</body></html>`;
}

export function dashboardHtml(user: UserContext, servers: readonly ServerRecord[], query: string): string {
  const rows = servers
    .map(
      (s) =>
        `<tr><td>${esc(s.path)}</td><td>${esc(s.server_name)}</td><td>${esc(s.description)}</td><td>${s.is_enabled ? 'enabled' : 'disabled'}</td><td>${esc(s.health_status)}</td><td>${s.tags.includes('security-pending') ? 'security-pending' : ''}</td></tr>`,
    )
    .join('');
  return page(
    'Switchboard registry',
    `<h1>MCP servers</h1><p>Signed in as ${esc(user.username)}</p><form method="get"><input name="query" value="${esc(query)}"><button>Search</button></form>` +
      `<table><thead><tr><th>Path</th><th>Name</th><th>Description</th><th>State</th><th>Health</th><th>Security</th></tr></thead><tbody>${rows}</tbody></table>`,
  );
}

export function editFormHtml(s: ServerRecord, action: string, csrfToken?: string): string {
  const field = (name: string, value: unknown) =>
    `<label>${esc(name)} <input name="${esc(name)}" value="${esc(value)}"></label><br>`;
  return page(
    `Edit ${s.path}`,
    `<h1>Edit ${esc(s.path)}</h1><form method="post" action="${esc(action)}">` +
      // Cookie-authenticated posts need the session's CSRF token (registry auth checks it).
      (csrfToken ? `<input type="hidden" name="csrf_token" value="${esc(csrfToken)}">` : '') +
      field('name', s.server_name) +
      field('description', s.description) +
      field('proxy_pass_url', s.proxy_pass_url) +
      field('tags', s.tags.join(',')) +
      field('num_tools', s.num_tools) +
      field('num_stars', s.num_stars) +
      field('is_python', s.is_python) +
      field('license', s.license) +
      // The credential is write-only: the form offers a new one, never shows the old.
      `<label>auth_scheme <input name="auth_scheme" value="${esc(s.auth_scheme)}"></label><br>` +
      `<label>new auth_credential <input type="password" name="auth_credential" value=""></label><br>` +
      `<button>Save</button></form>`,
  );
}
