import t from 'tap';
import { ADMIN_PASSWORD, startCluster } from './cluster.ts';

/**
 * Login lockout across replicas: failed logins sent through nginx land on both
 * replicas (round robin; which one answered is read from X-Request-Id, whose
 * prefix is per process), and together they lock the client out on both, even
 * with the right password. Another client address behind the same nginx (told
 * by X-Forwarded-For, believed from loopback) still signs in.
 */

t.setTimeout(900_000);

const prefixOf = (res: Response) => (res.headers.get('x-request-id') ?? '').split('-')[0];

t.test('failures spread over two replicas lock the user out on both', async (t) => {
  const c = await startCluster(t, {
    config: { registry: { login_lockout: { max_attempts: 4, max_attempts_per_ip: 50, window_s: 600 } } },
  });
  const prefixes = await Promise.all(c.replicas.map(async (r) => prefixOf(await fetch(`${r.base}/healthz`))));
  t.not(prefixes[0], prefixes[1], 'the replicas have distinct request id prefixes');

  const login = (base: string, password: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/auth/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ username: 'admin', password }),
    });

  const answeredBy = new Set<string>();
  for (let i = 0; i < 4; i++) {
    const res = await login(c.base, 'wrong-password');
    t.equal(res.status, 401, `failure ${i + 1} through nginx is 401`);
    answeredBy.add(prefixOf(res));
  }
  t.same([...answeredBy].sort(), [...prefixes].sort(), 'the four failures were answered by both replicas');

  for (const r of c.replicas) {
    const res = await login(r.base, ADMIN_PASSWORD);
    t.equal(res.status, 429, `replica ${r.index} refuses the right password`);
    const body = (await res.json()) as { code: string; detail: string };
    t.equal(body.code, 'SB_ERR_AUTH_LOCKED_OUT');
    t.ok(Number(res.headers.get('retry-after')) > 0, `replica ${r.index} sends Retry-After`);
  }
  const basic = await fetch(`${c.base}/api/auth/me`, {
    headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}` },
  });
  t.equal(basic.status, 429, 'HTTP Basic from the locked-out address is refused too');
  for (let i = 0; i < 2; i++)
    t.equal((await login(c.base, ADMIN_PASSWORD)).status, 429, `through nginx (request ${i + 1}) it is locked`);

  // Another client behind nginx: its own count, so the guesser did not lock the admin out.
  const elsewhere = await login(c.base, ADMIN_PASSWORD, { 'x-forwarded-for': '198.51.100.7' });
  t.equal(elsewhere.status, 302, 'the admin signs in from another address');
  t.match(elsewhere.headers.get('set-cookie') ?? '', /mcp_gateway_session=/);
});
