import { signal } from '@preact/signals';

/**
 * History routing under /ui: every console page has a real URL (bookmarkable, reloadable, and the server's
 * SPA fallback answers it with index.html). `location` is a signal, so a component that reads it re-renders
 * when the page changes.
 */
export const BASE = '/ui';

export interface Location {
  /** The path under /ui, always starting with '/': '/servers', '/servers/everything'. */
  path: string;
  query: URLSearchParams;
}

/** The server answers its login URLs (/login, /api/auth/login) with the console, which shows its login page. */
const LOGIN_URLS = new Set(['/login', '/api/auth/login']);

function read(): Location {
  const p = LOGIN_URLS.has(window.location.pathname.replace(/\/+$/, '')) ? `${BASE}/login` : window.location.pathname;
  const path = p === BASE || p === `${BASE}/` ? '/' : p.startsWith(`${BASE}/`) ? p.slice(BASE.length) : p;
  return { path: path.replace(/\/+$/, '') || '/', query: new URLSearchParams(window.location.search) };
}

export const location = signal<Location>(read());

window.addEventListener('popstate', () => {
  location.value = read();
});

/** The full URL of a console path ('/servers' -> '/ui/servers'). */
export function href(path: string): string {
  return `${BASE}${path.startsWith('/') ? path : `/${path}`}`;
}

/** Go to a console path ('/servers?q=x'); `replace` keeps the back button from returning here. */
export function navigate(path: string, opts: { replace?: boolean } = {}): void {
  const url = href(path);
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  location.value = read();
  // A new page starts at the top, like a real navigation.
  window.scrollTo(0, 0);
}

/** Replace the query string of the current page without a new history entry (filters, search box). */
export function setQuery(params: Record<string, string | undefined>): void {
  const q = new URLSearchParams(window.location.search);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '') q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  history.replaceState(null, '', `${window.location.pathname}${s ? `?${s}` : ''}`);
  location.value = read();
}

/**
 * Match a path against a pattern: ':name' takes one segment, ':name*' takes the rest (server paths may
 * hold slashes). Returns the decoded parameters, or undefined.
 */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const ps = pattern.split('/').filter(Boolean);
  const xs = path.split('/').filter(Boolean);
  const params: Record<string, string> = {};
  for (let i = 0; i < ps.length; i++) {
    const p = ps[i];
    if (p.startsWith(':') && p.endsWith('*')) {
      if (i >= xs.length) return undefined;
      params[p.slice(1, -1)] = xs.slice(i).map(decodeURIComponent).join('/');
      return params;
    }
    if (i >= xs.length) return undefined;
    if (p.startsWith(':')) params[p.slice(1)] = decodeURIComponent(xs[i]);
    else if (p !== xs[i]) return undefined;
  }
  return xs.length === ps.length ? params : undefined;
}

/**
 * Clicks on same-origin links under /ui are handled here instead of loading a page: one listener for the
 * whole document, so plain `<a href={href('/x')}>` works everywhere (and stays a real link for new tabs).
 */
export function interceptLinks(): void {
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, window.location.href);
    if (url.origin !== window.location.origin) return;
    if (url.pathname !== BASE && !url.pathname.startsWith(`${BASE}/`)) return;
    e.preventDefault();
    navigate(`${url.pathname.slice(BASE.length) || '/'}${url.search}`);
  });
}
