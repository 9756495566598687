import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, messageOf } from '../api.ts';

/** The heading block of every page: title, an optional line under it, actions on the right. */
export function PageHeader(props: { title: string; sub?: ComponentChildren; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <div>
        <h1>{props.title}</h1>
        {props.sub && <p class="muted">{props.sub}</p>}
      </div>
      {props.children && <div class="actions">{props.children}</div>}
    </header>
  );
}

/** An error from the API, with its code (so a user can quote it). */
export function ErrorBox(props: { error: unknown }) {
  if (!props.error) return null;
  const e = props.error;
  return (
    <div class="alert error" role="alert">
      {messageOf(e)}
      {e instanceof ApiError && <code class="code-tag">{e.code}</code>}
    </div>
  );
}

export function Loading(props: { what?: string }) {
  return (
    <p class="muted" aria-busy="true">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  );
}

/** Copies `text`; says "Copied" for a moment. */
export function CopyButton(props: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="btn"
      onClick={async () => {
        await navigator.clipboard.writeText(props.text);
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  );
}

/** Data loaded from the API for a page: [value, error, reload]. */
export function useApi<T>(load: () => Promise<T>, deps: unknown[]): [T | undefined, unknown, () => void] {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [tick, setTick] = useState(0);
  // The caller names what the loader depends on (deps), so the effect re-runs on those, not on the loader's identity.
  useEffect(() => {
    let live = true;
    setError(undefined);
    load().then(
      (v) => live && setValue(v),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return [value, error, () => setTick((t) => t + 1)];
}

/** Shield shown for servers whose security scan is pending (tag `security-pending`). */
export function Shield(props: { label: string }) {
  return (
    <span class="shield" role="img" aria-label={props.label} title={props.label}>
      <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
        <path d="M8 1 2 3.5v4C2 11 4.6 14 8 15c3.4-1 6-4 6-7.5v-4L8 1Z" fill="currentColor" />
      </svg>
    </span>
  );
}

export function Tags(props: { tags: string[] }) {
  return (
    <span class="tags">
      {props.tags.map((t) => (
        <span class="tag" key={t}>
          {t}
        </span>
      ))}
    </span>
  );
}
