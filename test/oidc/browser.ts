/**
 * What a user's browser does with an authorization URL of the test issuer
 * (./server.ts with `users`): follow the redirects with its cookies, sign in
 * on oidc-provider's development login page, press Continue on its consent
 * page, and stop at the redirect to the client's callback. Plain fetch, so
 * every step is a real HTTP exchange with oidc-provider.
 */
export async function signIn(authorizationUrl: string, login: string, callbackPrefix: string): Promise<string> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const remember = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      // An emptied cookie (logout, spent interaction) is dropped as a browser would.
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(pair.slice(0, eq));
      else jar.set(pair.slice(0, eq), value);
    }
  };

  let url = authorizationUrl;
  let init: RequestInit = { method: 'GET' };
  for (let step = 0; step < 20; step++) {
    if (url.startsWith(callbackPrefix)) return url;
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader() },
    });
    remember(res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).toString();
      init = { method: 'GET' };
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`the issuer answered ${res.status} at ${url}: ${html.slice(0, 300)}`);
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
    if (!form) throw new Error(`no form on the page at ${url}: ${html.slice(0, 300)}`);
    const fields = new URLSearchParams();
    for (const input of form[2].matchAll(/<input[^>]*>/gi)) {
      const name = /name="([^"]+)"/.exec(input[0])?.[1];
      if (!name) continue;
      const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
      fields.set(name, name === 'login' ? login : name === 'password' ? 'any-password' : value);
    }
    url = new URL(form[1].replace(/&amp;/g, '&'), url).toString();
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: fields.toString(),
    };
  }
  throw new Error(`no redirect to ${callbackPrefix} after 20 steps (last at ${url})`);
}

/**
 * A user's access token from the test issuer by the whole authorization code
 * flow (PKCE S256): the client's authorization URL, signIn(), and the code
 * exchanged at the token endpoint. With the issuer's default resource the
 * token is a JWT for that resource (audience `switchboard` by default).
 */
export async function userAccessToken(
  issuer: string,
  client: { id: string; secret: string; redirectUri: string },
  login: string,
  scope = 'openid',
): Promise<string> {
  const { createHash, randomBytes } = await import('node:crypto');
  const verifier = randomBytes(32).toString('base64url');
  const authz = new URL(`${issuer}/auth`);
  authz.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.id,
    redirect_uri: client.redirectUri,
    scope,
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const code = new URL(await signIn(authz.toString(), login, client.redirectUri)).searchParams.get('code');
  if (!code) throw new Error(`no code for ${login}`);
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      code_verifier: verifier,
    }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!res.ok || !body.access_token) throw new Error(`code exchange failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}
