import t from 'tap';
import { apiKeyAuthSection, keyHeader } from '../fixtures/api-key-users.ts';
import { makeApp } from '../helpers/app.ts';
import { signIn } from '../oidc/browser.ts';
import { startOidcServer } from '../oidc/server.ts';

/**
 * USER_FEDERATION (3-legged OAuth) on the `oidc` identity provider against a
 * real oidc-provider: the token request answers an authorization URL, the
 * user signs in and consents on the issuer's own pages, /auth/complete trades
 * the code, and the next token request returns the user's token.
 */

const CLIENT_SECRET = 'app-secret-3lo-71d2';
const CALLBACK = 'http://127.0.0.1:9/callback';

t.test('3-legged authorization: authorization URL, consent at the issuer, auth/complete, stored token', async (t) => {
  t.setTimeout(300_000);
  const oidc = await startOidcServer({
    clients: { 'sb-app': { secret: CLIENT_SECRET, redirect_uris: [CALLBACK] } },
    users: { alice: { email: 'alice@example.test' }, bob: { email: 'bob@example.test' } },
  });
  t.teardown(() => oidc.close());
  const app = await makeApp(t, {
    providers: {
      auth: apiKeyAuthSection({ alice: {}, bob: {}, root: { admin: true } }),
      identity: {
        instances: { noop: { type: 'noop' }, oidc: { type: 'oidc', options: { issuer: oidc.issuer } } },
      },
    },
  });
  const post = (who: string, url: string, payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: `/api/v1/identity${url}`,
      payload: payload as object,
      headers: { ...keyHeader(who), ...headers },
    });

  t.equal(
    (await post('alice', '/workload-identities', { name: 'mail-agent', allowed_return_urls: [CALLBACK] })).statusCode,
    201,
  );
  const cp = await post('alice', '/credential-providers', {
    name: 'mail',
    provider_type: 'oauth2',
    config: { client_id: 'sb-app', client_secret: CLIENT_SECRET, scopes: ['openid', 'email'] },
  });
  t.equal(cp.statusCode, 201, cp.body);
  const workloadToken = async () =>
    (await post('alice', '/workload-token', { workload_name: 'mail-agent', user_id: 'alice' })).json().workload_token;
  const federated = async (extra: Record<string, unknown> = {}) =>
    post('alice', '/token', {
      credential_provider: 'mail',
      workload_token: await workloadToken(),
      auth_flow: 'USER_FEDERATION',
      callback_url: CALLBACK,
      ...extra,
    });

  // 1. No token yet: an authorization URL with PKCE and a state, and the session that names it.
  const first = await federated();
  t.equal(first.statusCode, 200, first.body);
  const { authorization_url, session_uri, access_token } = first.json();
  t.equal(access_token, null, 'no token before the user authorises');
  t.match(session_uri, /^urn:switchboard:identity:auth-session:/);
  const authz = new URL(authorization_url);
  t.equal(authz.origin, oidc.origin, "the URL is the issuer's authorization endpoint");
  t.match(Object.fromEntries(authz.searchParams), {
    response_type: 'code',
    client_id: 'sb-app',
    redirect_uri: CALLBACK,
    code_challenge_method: 'S256',
    scope: 'openid email',
  });
  t.equal(authz.searchParams.get('state'), session_uri.split(':').pop(), 'the state is the session');
  t.notMatch(first.body, CLIENT_SECRET);

  const elsewhere = await federated({ callback_url: 'https://evil.example/cb' });
  t.equal(elsewhere.statusCode, 400, "a callback outside the workload's allowed_return_urls is refused");
  t.equal(elsewhere.json().code, 'SB_ERR_IDENTITY_CALLBACK_NOT_ALLOWED');

  // 2. The user signs in and consents at the issuer, which redirects to the callback with a code.
  const landed = new URL(await signIn(authorization_url, 'alice', CALLBACK));
  t.equal(landed.searchParams.get('state'), authz.searchParams.get('state'));
  const code = landed.searchParams.get('code');
  t.ok(code, 'the issuer sent a code back');

  // 3. Only the caller that started it, for the user it was started for, completes it.
  const bobTries = await post('bob', '/auth/complete', { session_uri: landed.toString() });
  t.equal(bobTries.statusCode, 403, 'another caller cannot complete the authorization');
  t.equal(bobTries.json().code, 'SB_ERR_IDENTITY_AUTH_SESSION_FORBIDDEN');
  const wrongUser = await post('alice', '/auth/complete', { session_uri, code, user_id: 'bob' });
  t.equal(wrongUser.statusCode, 403, 'nor for another user');
  const unknown = await post('alice', '/auth/complete', {
    session_uri: 'urn:switchboard:identity:auth-session:nope',
    code,
  });
  t.equal(unknown.statusCode, 400, 'an unknown state is a 400');
  t.equal(unknown.json().code, 'SB_ERR_IDENTITY_AUTH_SESSION_UNKNOWN');
  const noCode = await post('alice', '/auth/complete', { session_uri });
  t.equal(noCode.statusCode, 400);
  t.equal(noCode.json().code, 'SB_ERR_IDENTITY_AUTH_CODE_MISSING');

  const done = await post('alice', '/auth/complete', { session_uri, code, user_id: 'alice' });
  t.equal(done.statusCode, 204, done.body);
  const again = await post('alice', '/auth/complete', { session_uri, code });
  t.equal(again.statusCode, 400, 'a session completes once');

  // 4. The next token request returns the user's token: it is alice's at the issuer's userinfo.
  const second = await federated();
  t.equal(second.statusCode, 200, second.body);
  const token: string = second.json().access_token;
  t.ok(token, 'the token comes back');
  t.equal(second.json().authorization_url, null);
  t.ok(second.json().expires_in > 0);
  const info = await fetch(`${oidc.issuer}/me`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(info.status, 200);
  t.match(await info.json(), { sub: 'alice', email: 'alice@example.test' }, "alice's own token");
  t.equal((await federated()).json().access_token, token, 'and again on the next request');
  const rootAsks = await post('root', '/token', {
    credential_provider: 'mail',
    workload_token: (await post('root', '/workload-token', { workload_name: 'mail-agent', user_id: 'alice' })).json()
      .workload_token,
    auth_flow: 'USER_FEDERATION',
    callback_url: CALLBACK,
  });
  t.equal(rootAsks.statusCode, 200, rootAsks.body);
  t.equal(rootAsks.json().access_token, null, 'another caller naming the same user does not get her token');
  t.ok(rootAsks.json().authorization_url, 'it must have her authorise for it');
  for await (const [, v] of app.sb.store.collection('identity_oidc_user_tokens:oidc').entries())
    t.notMatch(JSON.stringify(v), token, 'the token is encrypted at rest');

  // An expired token is renewed with the refresh token the issuer gave, without asking the user.
  const held = app.sb.store.collection<{ expires_at?: number; refresh_token?: string }>(
    'identity_oidc_user_tokens:oidc',
  );
  const stored = (await held.get('mail\nalice'))!;
  t.ok(stored.refresh_token, 'a refresh token is kept (encrypted)');
  await held.set('mail\nalice', { ...stored, expires_at: Date.now() - 1000 });
  const renewed = await federated();
  t.equal(renewed.statusCode, 200, renewed.body);
  t.ok(renewed.json().access_token && renewed.json().access_token !== token, 'a new token, from the refresh grant');
  const renewedInfo = await fetch(`${oidc.issuer}/me`, {
    headers: { authorization: `Bearer ${renewed.json().access_token}` },
  });
  t.match(await renewedInfo.json(), { sub: 'alice' });

  // 5. force_authentication starts over; a session past its lifetime is refused; a refusal at the issuer is a 400.
  const forced = await federated({ force_authentication: true });
  t.ok(forced.json().authorization_url, 'force_authentication asks the user again');
  const sessions = app.sb.store.collection<{ expires_at: number }>('identity_oidc_auth_sessions:oidc');
  const state = forced.json().session_uri.split(':').pop();
  await sessions.set(state, { ...(await sessions.get(state))!, expires_at: Date.now() - 1 });
  const expired = await post('alice', '/auth/complete', { session_uri: forced.json().session_uri, code: 'x' });
  t.equal(expired.statusCode, 400, 'an expired session is a 400');
  t.equal(expired.json().code, 'SB_ERR_IDENTITY_AUTH_SESSION_UNKNOWN');

  const hinted = await federated({ force_auth: true, custom_parameters: { login_hint: 'alice', prompt: 'login' } });
  t.ok(hinted.json().authorization_url, "the reference client's force_auth asks again too");
  t.match(Object.fromEntries(new URL(hinted.json().authorization_url).searchParams), {
    login_hint: 'alice',
    prompt: 'login',
    code_challenge_method: 'S256',
  });
  const hijack = await federated({ force_auth: true, custom_parameters: { state: 'mine', redirect_uri: 'x' } });
  t.equal(hijack.statusCode, 400, "custom_parameters cannot set the protocol's own");
  t.match(hijack.json(), {
    code: 'SB_ERR_IDENTITY_CUSTOM_PARAMETER',
    detail: /redirect_uri, state|state, redirect_uri/,
  });

  const denied = await federated({ force_authentication: true });
  const deniedState = denied.json().session_uri.split(':').pop();
  const deniedCb = await post('alice', '/auth/complete', {
    session_uri: `${CALLBACK}?error=access_denied&error_description=user+said+no&state=${deniedState}`,
  });
  t.equal(deniedCb.statusCode, 400);
  t.match(deniedCb.json(), { code: 'SB_ERR_IDENTITY_AUTH_DENIED', detail: /access_denied: user said no/ });

  const bogus = await federated({ force_authentication: true });
  const badCode = await post('alice', '/auth/complete', { session_uri: bogus.json().session_uri, code: 'forged' });
  t.equal(badCode.statusCode, 400, 'a code the issuer refuses is the caller’s to fix');
  t.match(badCode.json(), { code: 'SB_ERR_IDENTITY_TOKEN_REFUSED', detail: /invalid_grant/ });

  // Deleting the credential provider deletes the tokens its users delegated.
  t.equal(
    (
      await app.inject({
        method: 'DELETE',
        url: '/api/v1/identity/credential-providers/mail',
        headers: keyHeader('alice'),
      })
    ).statusCode,
    204,
  );
  const left: string[] = [];
  for await (const [k] of app.sb.store.collection('identity_oidc_user_tokens:oidc').entries()) left.push(k);
  t.same(left, [], 'no stored user token outlives its provider');

  // noop runs no such flow: 501 naming the capability, never a pretend success.
  const noop = await post('alice', '/auth/complete', { session_uri }, { 'x-provider-identity': 'noop' });
  t.equal(noop.statusCode, 501);
  t.match(noop.json().detail, /3-legged user authorization/);
});
