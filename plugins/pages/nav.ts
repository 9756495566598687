/**
 * The small navigation bar every server-rendered page carries, so each page
 * leads to the others and to the web console (/ui/), which browsers are sent to. Links to
 * registry pages are left out when the registry surface is not running.
 */
export interface NavOptions {
  /** Whether the registry surface (dashboard, tokens, login) is served by this process. */
  registry?: boolean;
}

export const NAV_LINKS: ReadonlyArray<{ href: string; label: string; registry?: boolean }> = [
  { href: '/', label: 'Home' },
  { href: '/ui/', label: 'Console' },
  { href: '/api/', label: 'Registry', registry: true },
  { href: '/api/tokens', label: 'Tokens', registry: true },
  { href: '/docs', label: 'API docs' },
  { href: '/openapi.json', label: 'OpenAPI' },
  { href: '/readyz', label: 'Readiness' },
  { href: '/login', label: 'Sign in', registry: true },
];

export function navHtml(opts: NavOptions = { registry: true }): string {
  const links = NAV_LINKS.filter((l) => !l.registry || opts.registry).map((l) => `<a href="${l.href}">${l.label}</a>`);
  return `<nav aria-label="Switchboard">${links.join(' · ')}</nav>`;
}
