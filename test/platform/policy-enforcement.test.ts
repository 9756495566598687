import t from 'tap';
import { apiKeyAuthSection, keyHeader } from '../fixtures/api-key-users.ts';
import { makeApp } from '../helpers/app.ts';

// rita is in research, olga is not, root is an admin whose rights come only from the break-glass policy.
const users = { rita: { groups: ['research'] }, olga: {}, root: { admin: true } };
const BREAK_GLASS = 'permit(principal, action, resource) when { principal.is_admin };';

const enforcing = () => ({
  providers: {
    auth: apiKeyAuthSection(users),
    policy: {
      default: 'cedar',
      instances: {
        cedar: { type: 'cedar', options: { enforce: true, engine: 'main', bootstrap_policies: [BREAK_GLASS] } },
      },
    },
  },
});

t.test(
  'enforcement on: group permits per action, default deny, forbid wins, updates apply, bad bodies are refused',
  async (t) => {
    const app = await makeApp(t, enforcing());
    const rita = keyHeader('rita');
    const olga = keyHeader('olga');
    const root = keyHeader('root');

    const enf = await app.inject({ method: 'GET', url: '/api/v1/policy/enforcement', headers: root });
    t.equal(enf.statusCode, 200);
    t.equal(enf.json().enabled, true);
    const eid = enf.json().engine_id as string;
    t.ok(eid, 'the enforcing engine was created from the config');

    const add = (policy_body: string) =>
      app.inject({
        method: 'POST',
        url: `/api/v1/policy/engines/${eid}/policies`,
        headers: root,
        payload: { policy_body },
      });
    const research = await add('permit(principal in Group::"research", action == Action::"memory:search", resource);');
    t.equal(research.statusCode, 201, 'the admin writes through the break-glass policy');

    const store = (h: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/api/v1/memory/lab', headers: h, payload: { key: 'k', content: 'x' } });
    const search = (h: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/api/v1/memory/lab/search', headers: h, payload: { query: 'x' } });

    const denied = await store(rita);
    t.equal(denied.statusCode, 403, 'research may not store');
    t.same(denied.json(), {
      detail: 'Forbidden by policy: memory:store on Namespace::"lab"',
      code: 'SB_ERR_POLICY_DENIED',
    });
    t.equal((await search(rita)).statusCode, 200, 'research may search');
    t.equal((await store(olga)).statusCode, 403, 'another user may not store');
    t.equal((await search(olga)).statusCode, 403, 'nor search');
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/v1/auth/whoami', headers: olga })).statusCode,
      403,
      'default deny covers every route',
    );

    // An update takes effect on the next request.
    const pid = research.json().policy_id as string;
    const upd = await app.inject({
      method: 'PUT',
      url: `/api/v1/policy/engines/${eid}/policies/${pid}`,
      headers: root,
      payload: {
        policy_body:
          'permit(principal in Group::"research", action in [Action::"memory:search", Action::"memory:store"], resource);',
      },
    });
    t.equal(upd.statusCode, 200);
    t.equal((await store(rita)).statusCode, 201, 'the widened policy admits the store at once');

    // forbid wins over permit.
    t.equal(
      (
        await add(
          'forbid(principal, action == Action::"memory:store", resource == Namespace::"lab") when { context.provider == "default" };',
        )
      ).statusCode,
      201,
    );
    t.equal((await store(rita)).statusCode, 403, 'forbid beats the permit');
    t.equal((await search(rita)).statusCode, 200, 'other actions unaffected');

    // A bad body: 400 with position, nothing stored.
    const before = (
      await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${eid}/policies`, headers: root })
    ).json().policies.length;
    const bad = await add('permit(principal, action, resource)\nwhen { principal.is_admin == };');
    t.equal(bad.statusCode, 400);
    t.equal(bad.json().code, 'SB_ERR_POLICY_INVALID');
    t.match(bad.json().detail, /line 2, column \d+/);
    t.equal(
      (await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${eid}/policies`, headers: root })).json()
        .policies.length,
      before,
      'nothing stored',
    );

    // Writes need an admin even where a policy would permit them.
    t.equal((await add('permit(principal in Group::"research", action, resource);')).statusCode, 201);
    const byRita = await app.inject({
      method: 'POST',
      url: `/api/v1/policy/engines/${eid}/policies`,
      headers: rita,
      payload: { policy_body: 'permit(principal, action, resource);' },
    });
    t.equal(byRita.statusCode, 403);
    t.equal(byRita.json().code, 'SB_ERR_POLICY_ADMIN_REQUIRED');
  },
);

t.test('a tool argument condition decides tools:invoke', async (t) => {
  const app = await makeApp(t, enforcing());
  const root = keyHeader('root');
  const eid = (await app.inject({ method: 'GET', url: '/api/v1/policy/enforcement', headers: root })).json()
    .engine_id as string;
  await app.inject({
    method: 'POST',
    url: `/api/v1/policy/engines/${eid}/policies`,
    headers: root,
    payload: {
      policy_body:
        'permit(principal, action == Action::"tools:invoke", resource == Tool::"echo") when { context has arguments && context.arguments has text && context.arguments.text != "secret" };',
    },
  });
  const invoke = (text: string) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/tools/echo/invoke',
      headers: keyHeader('olga'),
      payload: { params: { text } },
    });
  const ok = await invoke('hello');
  t.not(ok.statusCode, 403, 'a permitted argument passes enforcement (the noop tools provider answers)');
  const no = await invoke('secret');
  t.equal(no.statusCode, 403);
  t.equal(no.json().detail, 'Forbidden by policy: tools:invoke on Tool::"echo"');
});

t.test('the policy schema lists every route with its action', async (t) => {
  const app = await makeApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/v1/policy/schema' });
  t.equal(res.statusCode, 200);
  const actions = res.json().actions as Array<{ action: string; method: string; path: string }>;
  const find = (method: string, path: string) => actions.find((a) => a.method === method && a.path === path)?.action;
  t.equal(find('POST', '/api/v1/memory/:namespace'), 'memory:store');
  t.equal(find('POST', '/api/v1/memory/:namespace/search'), 'memory:search');
  t.equal(find('POST', '/api/v1/llm/completions'), 'llm:complete');
  t.equal(find('POST', '/api/v1/tools/:name/invoke'), 'tools:invoke');
  t.equal(find('POST', '/api/v1/agents/:name/chat'), 'agents:chat');
  t.match(res.json().entities.principal, /User::/);
});

t.test('enforcement off: the hook is not installed', async (t) => {
  const app = await makeApp(t, {
    providers: { policy: { default: 'cedar', instances: { cedar: { type: 'cedar', options: {} } } } },
  });
  t.same((await app.inject({ method: 'GET', url: '/api/v1/policy/enforcement' })).json(), {
    engine_id: null,
    enabled: false,
  });
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/memory/lab', payload: { key: 'k', content: 'x' } })).statusCode,
    201,
    'no policy needed',
  );
});
