import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import './styles/theme.css';
import './styles/app.css';
import { Layout } from './layout.tsx';
import { LoginPage } from './login.tsx';
import { location, match, navigate, interceptLinks } from './router.ts';
import { routes } from './routes.ts';
import { loadMe, me, registryOn } from './session.ts';
import { applyTheme } from './theme.ts';

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>No console page at {location.value.path}.</p>
    </section>
  );
}

function App() {
  const { path } = location.value;
  const user = me.value;

  useEffect(() => {
    // The page's title follows the route, so history entries and tabs read well.
    const r = routes.find((x) => match(x.path, path));
    document.title = `${r?.title ?? (path === '/login' ? 'Sign in' : 'Switchboard')} · Switchboard`;
  }, [path]);

  if (path === '/login') return <LoginPage />;
  // While /api/auth/me is in flight the page renders already and loads its own data in parallel (one round
  // trip less before the first meaningful paint); a 401 on either sends the browser to the login page.
  // Without the registry surface there is no login: the platform's own auth (noop, API key, JWT) applies.
  if (user === null && registryOn.value) {
    navigate(`/login?next=${encodeURIComponent(`/ui${path}${window.location.search}`)}`, { replace: true });
    return null;
  }
  if (path === '/') {
    if (user === undefined) return null;
    const first = routes.find((r) => r.nav !== false && (!r.registry || registryOn.value));
    if (first) navigate(first.path, { replace: true });
    return null;
  }
  for (const r of routes) {
    const params = match(r.path, path);
    if (params) {
      const Page = r.component;
      // key: a new path remounts the page, so its state (loaded data, forms) starts fresh.
      return (
        <Layout>
          <Page key={path} {...params} />
        </Layout>
      );
    }
  }
  return (
    <Layout>
      <NotFound />
    </Layout>
  );
}

applyTheme();
interceptLinks();
void loadMe();
render(<App />, document.getElementById('app')!);
