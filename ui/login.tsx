import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, messageOf, resetSession } from './api.ts';
import { location } from './router.ts';
import { theme, toggleTheme } from './theme.ts';

interface Provider {
  name: string;
  display_name: string;
}

/** Only a console path may be a `next`: never another origin (an open redirect). */
function nextUrl(): string {
  const n = location.value.query.get('next') ?? '';
  return n.startsWith('/ui/') && !n.startsWith('/ui//') ? n : '/ui/';
}

export function LoginPage() {
  const q = location.value.query;
  const [error, setError] = useState<string | undefined>(q.get('error') ?? undefined);
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState<Provider[]>([]);

  useEffect(() => {
    api<{ providers: Provider[] }>('/api/auth/providers', { allow401: true }).then(
      (r) => setProviders(r.providers),
      () => setProviders([]),
    );
  }, []);

  async function submit(e: Event) {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      // JSON login: 302 on success (not followed: the console goes where it wants), 401 with the API's message.
      const r = await fetch('/api/auth/login', {
        method: 'POST',
        credentials: 'same-origin',
        redirect: 'manual',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ username: data.get('username'), password: data.get('password') }),
      });
      if (r.type === 'opaqueredirect' || r.ok) {
        resetSession();
        window.location.assign(nextUrl());
        return;
      }
      const body = (await r.json().catch(() => ({}))) as { detail?: unknown; code?: string };
      throw new ApiError(r.status, body.code ?? `HTTP_${r.status}`, String(body.detail ?? r.statusText));
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="login-wrap">
      <main id="main" class="login-card">
        <div class="login-head">
          <span class="brand">
            <span class="brand-mark" aria-hidden="true">
              ⌁
            </span>
            Switchboard
          </span>
          <button
            type="button"
            class="btn ghost"
            onClick={toggleTheme}
            aria-label={`Switch to ${theme.value === 'dark' ? 'light' : 'dark'} theme`}
          >
            {theme.value === 'dark' ? '☀' : '☾'}
          </button>
        </div>
        <h1>Sign in</h1>
        {q.get('reason') === 'expired' && !error && (
          <p class="alert info" role="status">
            Your session has ended. Sign in again to continue.
          </p>
        )}
        {error && (
          <p class="alert error" role="alert">
            {error}
          </p>
        )}
        <form onSubmit={submit} class="form">
          <label>
            Username
            <input name="username" autocomplete="username" required />
          </label>
          <label>
            Password
            <input name="password" type="password" autocomplete="current-password" required />
          </label>
          <button type="submit" class="btn primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        {providers.length > 0 && (
          <div class="sso">
            <p class="muted">or</p>
            {providers.map((p) => (
              // A full navigation: the server starts the authorization-code flow with PKCE and comes back to /.
              <a class="btn block" key={p.name} href={`/api/auth/auth/${encodeURIComponent(p.name)}`}>
                Sign in with {p.display_name}
              </a>
            ))}
          </div>
        )}
      </main>
    </div>
  );
}
