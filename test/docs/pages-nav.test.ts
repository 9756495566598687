import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { adminBasic } from '../helpers/registry-auth.ts';
import { registerServer } from '../helpers/registry-servers.ts';
import { NAV_LINKS } from '../../plugins/pages/nav.ts';

const hrefs = (html: string) => [...html.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1]);
const navOf = (html: string) => /<nav aria-label="Switchboard">(.*?)<\/nav>/s.exec(html)?.[1];

t.test('/ is a landing page whose links all lead somewhere, and a browser login lands on it', async (t) => {
  const app = await makeApp(t);
  const home = await app.inject({ method: 'GET', url: '/' });
  t.equal(home.statusCode, 200);
  t.match(home.headers['content-type'], /^text\/html/);
  const links = hrefs(home.body);
  for (const want of ['/api/', '/docs', '/openapi.json', '/readyz', '/login'])
    t.ok(links.includes(want), `/ links to ${want}`);

  // The form a browser posts: a 302 to / and the session cookie.
  const password = adminBasic(app).authorization;
  const [user, pass] = Buffer.from(password.slice('Basic '.length), 'base64').toString().split(':');
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    payload: `username=${encodeURIComponent(user)}&password=${encodeURIComponent(pass)}`,
  });
  t.equal(login.statusCode, 302, login.body);
  t.equal(login.headers.location, '/', 'login sends the browser home');
  const cookie = ([] as string[])
    .concat(login.headers['set-cookie'] ?? [])
    .map((c) => c.split(';')[0])
    .join('; ');
  const landed = await app.inject({ method: 'GET', url: login.headers.location as string, headers: { cookie } });
  t.equal(landed.statusCode, 200, 'where the login lands is a page, not a JSON 404');
  t.match(landed.headers['content-type'], /^text\/html/);

  // Signed in, every link of the landing page answers (no 404, no error).
  for (const href of new Set(links)) {
    const res = await app.inject({ method: 'GET', url: href, headers: { cookie } });
    t.ok(res.statusCode < 400 || (href === '/readyz' && res.statusCode === 503), `${href} answers ${res.statusCode}`);
  }
});

t.test('every server-rendered page carries the same nav, linking to the others', async (t) => {
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0 } } });
  const admin = adminBasic(app);
  await registerServer(t, app, admin, { name: 'Nav', path: '/nav', proxy_pass_url: 'http://127.0.0.1:9' });
  const pages = ['/', '/api/', '/api/tokens', '/login', '/api/auth/login', '/api/edit/nav', '/edit/nav'];
  const expected = NAV_LINKS.map((l) => l.href);
  for (const url of pages) {
    const res = await app.inject({ method: 'GET', url, headers: url.includes('login') ? {} : admin });
    t.equal(res.statusCode, 200, `${url}: ${res.statusCode}`);
    const nav = navOf(res.body);
    t.ok(nav, `${url} has the nav`);
    t.same(hrefs(nav ?? ''), expected, `${url}'s nav links to every page`);
  }
});

t.test('on the platform surface alone, / leaves out the registry pages', async (t) => {
  const app = await makeApp(t, {}, { surfaces: ['platform'] });
  const home = await app.inject({ method: 'GET', url: '/' });
  t.equal(home.statusCode, 200);
  const links = hrefs(home.body);
  t.notOk(links.includes('/api/') || links.includes('/login'), 'no link to a page this process does not serve');
  for (const href of new Set(links)) {
    const res = await app.inject({ method: 'GET', url: href });
    t.not(res.statusCode, 404, `${href} exists`);
  }
});
