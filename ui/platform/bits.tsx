import type { ComponentChildren } from 'preact';
import { location, href as shellHref } from '../router.ts';

/**
 * Pieces only the platform pages use (the shell's common ones are in ui/components/common.tsx): URLs with
 * queries, status badges, JSON blocks, dates.
 */

/** A console URL for a platform path and query (`/platform/chat`, {agent: 'x'} -> `/ui/platform/chat?agent=x`). */
export const href = (path: string, query: Record<string, string | undefined> = {}) => shellHref(withQuery(path, query));

/** A console path with a query, for navigate(). */
export const withQuery = (path: string, query: Record<string, string | undefined> = {}) => {
  const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => !!e[1])).toString();
  return `${path}${q ? `?${q}` : ''}`;
};

/** A query parameter of the current page (the signal: a component reading it re-renders when it changes). */
export const queryParam = (name: string) => location.value.query.get(name) ?? undefined;

export const enc = encodeURIComponent;

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="pf-empty">{children}</p>;
}

const TONE: Record<string, string> = {
  ok: 'ok',
  healthy: 'ok',
  done: 'ok',
  idle: 'neutral',
  reachable: 'warn',
  degraded: 'warn',
  running: 'info',
  streaming: 'info',
  down: 'error',
  error: 'error',
  cancelled: 'neutral',
};

export function Badge({ value, label }: { value: string; label?: string }) {
  return <span class={`pf-badge pf-badge-${TONE[value] ?? 'neutral'}`}>{label ?? value}</span>;
}

export function Json({ value, label }: { value: unknown; label: string }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  // Focusable: a keyboard user can reach and scroll a long block (axe scrollable-region-focusable).
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: scrollable content must be reachable by keyboard
    <pre class="pf-json" title={label} tabIndex={0}>
      {text ?? 'null'}
    </pre>
  );
}

export const when = (iso: string | null | undefined) => {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
};
