/**
 * Every call the console makes goes through here, to the public API (the console has no private
 * endpoints). Same-origin cookies carry the session; unsafe methods carry the session's CSRF token in
 * X-CSRF-Token (from GET /api/auth/csrf, fetched once and again when the server refuses it); an error
 * answer `{detail, code}` becomes an ApiError; a 401 sends the browser to the login page.
 */
import { href } from './router.ts';

/** One entry of a 422 `detail` list (ANCHOR-FACTS: `{loc, msg, type}`). */
export interface FieldError {
  loc: Array<string | number>;
  msg: string;
  type?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    /** The server's message, or its list of field errors for a 422. */
    readonly detail: string | FieldError[],
  ) {
    super(typeof detail === 'string' ? detail : detail.map((d) => `${d.loc.at(-1) ?? ''}: ${d.msg}`).join('; '));
    this.name = 'ApiError';
  }

  /** Field name -> message, for forms that show each error beside its input. */
  get fields(): Record<string, string> {
    const out: Record<string, string> = {};
    if (Array.isArray(this.detail)) for (const d of this.detail) out[String(d.loc.at(-1) ?? '')] ??= d.msg;
    return out;
  }
}

export interface RequestOptions {
  method?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded (the registry's form endpoints). */
  form?: Record<string, string | number | boolean | undefined>;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** A 401 is returned as an ApiError instead of leaving for the login page (the login page itself, probes). */
  allow401?: boolean;
  signal?: AbortSignal;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
let csrf: Promise<string | undefined> | undefined;

/** The session's CSRF token; undefined without a session (bearer-only setups need none). */
function csrfToken(refresh = false): Promise<string | undefined> {
  if (refresh || !csrf)
    csrf = fetch('/api/auth/csrf', { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(async (r) => (r.ok ? ((await r.json()) as { csrf_token: string }).csrf_token : undefined))
      .catch(() => undefined);
  return csrf;
}

/** Forget the CSRF token (after login or logout the session, and so the token, changes). */
export function resetSession(): void {
  csrf = undefined;
}

let signedIn = false;
/** Called once the session is known to be valid: a later 401 then means it ended (the login page says so). */
export function markSignedIn(): void {
  signedIn = true;
}

/** Send the browser to the login page, remembering where it was. */
export function toLogin(reason?: string): void {
  const here = `${window.location.pathname}${window.location.search}`;
  const q = new URLSearchParams();
  if (!here.startsWith(href('/login'))) q.set('next', here);
  if (reason && signedIn) q.set('reason', reason);
  window.location.assign(`${href('/login')}?${q}`);
}

async function errorOf(r: Response): Promise<ApiError> {
  let body: { detail?: unknown; code?: unknown } | undefined;
  try {
    body = (await r.json()) as typeof body;
  } catch {
    body = undefined;
  }
  const detail = body?.detail;
  return new ApiError(
    r.status,
    typeof body?.code === 'string' ? body.code : `HTTP_${r.status}`,
    Array.isArray(detail)
      ? (detail as FieldError[])
      : typeof detail === 'string'
        ? detail
        : r.statusText || 'Request failed',
  );
}

/** The raw Response of a successful call (for streams and non-JSON bodies); errors throw ApiError. */
export async function request(path: string, opts: RequestOptions = {}): Promise<Response> {
  const method = (opts.method ?? (opts.json !== undefined || opts.form ? 'POST' : 'GET')).toUpperCase();
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  let body: BodyInit | undefined;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.form) {
    const f = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.form)) if (v !== undefined) f.set(k, String(v));
    body = f;
  }
  let url = path;
  if (opts.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== '') q.set(k, String(v));
    const s = q.toString();
    if (s) url += `${url.includes('?') ? '&' : '?'}${s}`;
  }
  const send = async (refresh: boolean) => {
    if (UNSAFE.has(method)) {
      const token = await csrfToken(refresh);
      if (token) headers['x-csrf-token'] = token;
    }
    return fetch(url, { method, headers, body, credentials: 'same-origin', signal: opts.signal });
  };
  let r = await send(false);
  // A token from an earlier session (the user logged in again in another tab): fetch the new one, retry once.
  if (r.status === 403 && UNSAFE.has(method)) {
    const err = await errorOf(r.clone());
    if (err.code === 'SB_ERR_AUTH_CSRF') r = await send(true);
  }
  if (r.ok) return r;
  const err = await errorOf(r);
  if (r.status === 401 && !opts.allow401) {
    toLogin('expired');
  }
  throw err;
}

/** A JSON call: `await api<{servers: Server[]}>('/api/servers')`. */
export async function api<T = unknown>(path: string, opts: RequestOptions = {}): Promise<T> {
  const r = await request(path, opts);
  if (r.status === 204) return undefined as T;
  const text = await r.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Message to show for any thrown value. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
