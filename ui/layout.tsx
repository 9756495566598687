import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { request, resetSession } from './api.ts';
import { href, location, navigate } from './router.ts';
import { routes, type NavGroup } from './routes.ts';
import { me, registryOn } from './session.ts';
import { theme, toggleTheme } from './theme.ts';

const GROUPS: NavGroup[] = ['Registry', 'Platform', 'Admin'];

/** Whether `path` is the nav entry's page or one below it. */
function current(entry: string, path: string): boolean {
  return path === entry || path.startsWith(`${entry}/`);
}

function Sidebar() {
  const path = location.value.path;
  const admin = me.value?.is_admin ?? false;
  return (
    <nav class="sidebar" aria-label="Console">
      <a class="brand" href={href('/')}>
        <span class="brand-mark" aria-hidden="true">
          ⌁
        </span>
        Switchboard
      </a>
      {GROUPS.map((g) => {
        const items = routes.filter(
          (r) => r.group === g && r.nav !== false && (!r.registry || registryOn.value) && (!r.admin || admin),
        );
        if (!items.length) return null;
        return (
          <div class="nav-group" key={g}>
            <h2 class="nav-title">{g}</h2>
            <ul>
              {items.map((r) => (
                <li key={r.path}>
                  <a href={href(r.path)} aria-current={current(r.path, path) ? 'page' : undefined}>
                    {r.title}
                  </a>
                </li>
              ))}
            </ul>
          </div>
        );
      })}
      <div class="nav-group">
        <h2 class="nav-title">Reference</h2>
        <ul>
          <li>
            <a href="/docs" rel="external">
              API docs
            </a>
          </li>
        </ul>
      </div>
    </nav>
  );
}

async function logout() {
  // CSRF-exempt by design (leaving carries no forged intent); the redirect it answers is not followed.
  await request('/api/auth/logout', { method: 'POST', allow401: true }).catch(() => undefined);
  resetSession();
  me.value = null;
  navigate('/login', { replace: true });
}

function TopBar() {
  const user = me.value;
  return (
    <div class="topbar">
      {/* Searches the registry's servers: not offered when this process runs only the platform. */}
      {registryOn.value ? (
        <form
          class="global-search"
          onSubmit={(e) => {
            e.preventDefault();
            const q = new FormData(e.currentTarget).get('q');
            navigate(`/servers?q=${encodeURIComponent(String(q ?? ''))}`);
          }}
        >
          <label class="sr-only" for="global-search">
            Search servers
          </label>
          <input id="global-search" name="q" type="search" placeholder="Search servers  ( / )" autocomplete="off" />
        </form>
      ) : (
        <span />
      )}
      <div class="topbar-right">
        <button
          type="button"
          class="btn ghost"
          onClick={toggleTheme}
          aria-label={`Switch to ${theme.value === 'dark' ? 'light' : 'dark'} theme`}
        >
          {theme.value === 'dark' ? '☀' : '☾'}
        </button>
        {user && (
          <>
            <span class="user" title={`${user.auth_method} · ${user.groups.join(', ')}`}>
              {user.username}
            </span>
            <button type="button" class="btn" onClick={logout}>
              Sign out
            </button>
          </>
        )}
      </div>
    </div>
  );
}

/** `/` focuses the page's search box (its own filter first, else the top bar's), unless the user is typing. */
function useSlashFocus() {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      const box =
        document.querySelector<HTMLInputElement>('main input[type=search]') ??
        document.querySelector<HTMLInputElement>('#global-search');
      if (!box) return;
      e.preventDefault();
      box.focus();
      box.select();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

export function Layout(props: { children: ComponentChildren }) {
  useSlashFocus();
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <Sidebar />
      <div class="content">
        <TopBar />
        <main id="main" tabIndex={-1}>
          {props.children}
        </main>
      </div>
    </div>
  );
}
