import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { unavailable } from '../../core/errors.ts';
import { openStore, type Store } from '../../core/store.ts';
import { apiKeyUsers, keyHeader, type KeyUser } from '../fixtures/api-key-users.ts';
import { writeProviderPackage } from '../fixtures/provider-package.ts';
import { makeApp, tempDir } from '../helpers/app.ts';

/**
 * Spec 5.3 for every platform resource a user creates, on the noop /
 * in-process providers with real api_key auth: each resource type x
 * {owner, other user, group member, admin} x {read, update, delete}.
 *
 * Each cell acts on a fresh record made by the owner, so a delete in one cell
 * cannot decide another. A refused update or delete must leave the record in
 * place (checked through the admin). Where a type has `shared_with`, the
 * owner shares with the group `research`, so "member" is a member through
 * sharing; elsewhere the member is just another user (or, for group memory
 * namespaces, a member of the owning group).
 */

type Actor = 'owner' | 'other' | 'member' | 'admin';
type Op = 'read' | 'update' | 'delete';
interface Req {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  payload?: unknown;
  headers?: Record<string, string>;
}

const USERS: Record<string, KeyUser> = {
  alice: { groups: ['research'] },
  bob: { groups: ['sales'] },
  carol: { groups: ['research'] },
  root: { admin: true },
};
const ACTOR_ID: Record<Actor, string> = { owner: 'alice', other: 'bob', member: 'carol', admin: 'root' };
const ACTORS: Actor[] = ['owner', 'other', 'member', 'admin'];
const OPS: Op[] = ['read', 'update', 'delete'];

interface ResourceCase {
  type: string;
  /** Who creates the record (default: the owner; policy engines only admins may create). */
  creator?: Actor;
  /** Creates a fresh record as `who` and returns its id. */
  create: (app: FastifyInstance, n: number, who: string) => Promise<string>;
  /** The request per operation; an operation the type has no route for is left out. */
  ops: Partial<Record<Op, (id: string) => Req>>;
  /** Expected status per operation and actor. */
  expect: Partial<Record<Op, Record<Actor, number>>>;
  /** A read that answers 200 while the record exists (run as admin). */
  probe: (id: string) => Req;
}

async function send(app: FastifyInstance, who: string, req: Req) {
  return app.inject({
    method: req.method,
    url: req.url,
    payload: req.payload as never,
    headers: { ...keyHeader(who), ...req.headers },
  });
}

async function created(app: FastifyInstance, who: string, req: Req, status = 201) {
  const res = await send(app, who, req);
  if (res.statusCode !== status)
    throw new Error(`setup ${req.method} ${req.url} as ${who}: ${res.statusCode} ${res.body}`);
  return res.json();
}

// Expectation rows, named for the rule they encode.
const OWNER_ADMIN = (ok: number): Record<Actor, number> => ({ owner: ok, other: 403, member: 403, admin: ok });
const SHARED = (ok: number): Record<Actor, number> => ({ owner: ok, other: 403, member: ok, admin: ok });
const EVERYONE = (ok: number): Record<Actor, number> => ({ owner: ok, other: ok, member: ok, admin: ok });
const ADMIN_ONLY = (ok: number): Record<Actor, number> => ({ owner: ok, other: 403, member: 403, admin: ok });

const TEAM = { description: 'd', planner: 'p', synthesizer: 's', workers: ['w'] };

/**
 * Scores and online configs are 501 on noop, so their rows run on a small
 * third-party evaluations package (discovered like any other) that keeps them
 * in memory; it knows nothing of owners, as a real backend would not.
 */
const recorderPackage = () =>
  writeProviderPackage({
    name: 'fixture-eval-recorder',
    provides: ['evaluations'],
    source: `let n = 0; const now = () => new Date().toISOString();
export const providers = [{
  type: 'recorder', kind: 'evaluations',
  create: (name) => {
    const evs = new Map(); const scores = new Map(); const configs = new Map();
    return {
      name, type: 'recorder', kind: 'evaluations',
      capabilities: { evaluators: true, evaluate: false, evaluator_types: 'any', scores: true, online_configs: true },
      createEvaluator: async (r) => { const e = { evaluator_id: 'ev' + ++n, name: r.name, evaluator_type: r.evaluator_type, config: r.config ?? {}, description: r.description ?? '', created_at: now(), updated_at: now() }; evs.set(e.evaluator_id, e); return e; },
      getEvaluator: async (id) => evs.get(id), listEvaluators: async () => ({ evaluators: [...evs.values()], next_token: null }),
      updateEvaluator: async (id, p) => evs.has(id) ? Object.assign(evs.get(id), p) : undefined, deleteEvaluator: async (id) => evs.delete(id),
      evaluate: async () => { throw new Error('not offered'); },
      createScore: async (r) => { const x = { score_id: 'sc' + ++n, name: r.name, value: r.value, trace_id: r.trace_id ?? null, observation_id: null, comment: r.comment ?? null, data_type: null, config_id: null, metadata: {}, created_at: now() }; scores.set(x.score_id, x); return x; },
      listScores: async () => ({ scores: [...scores.values()], next_token: null }), getScore: async (id) => scores.get(id), deleteScore: async (id) => scores.delete(id),
      createOnlineConfig: async (r) => { const c = { config_id: 'oc' + ++n, name: r.name, evaluator_ids: r.evaluator_ids, sampling_rate: r.sampling_rate, description: r.description, config: r.config, status: 'active', created_at: now() }; configs.set(c.config_id, c); return c; },
      listOnlineConfigs: async () => ({ configs: [...configs.values()] }), getOnlineConfig: async (id) => configs.get(id), deleteOnlineConfig: async (id) => configs.delete(id),
      healthcheck: async () => 'ok', close: async () => {},
    };
  },
}];
`,
  });
const RECORDER = { 'x-provider-evaluations': 'recorder' };

const CASES: ResourceCase[] = [
  {
    type: 'agent (shared_with research)',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/agents',
          payload: { name: `agent-${n}`, model: 'm', shared_with: ['research'] },
        })
      ).name,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/agents/${id}` }),
      update: (id) => ({ method: 'PUT', url: `/api/v1/agents/${id}`, payload: { description: 'changed' } }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/agents/${id}` }),
    },
    expect: { read: SHARED(200), update: OWNER_ADMIN(200), delete: OWNER_ADMIN(200) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/agents/${id}` }),
  },
  {
    type: 'team (shared_with research)',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/teams',
          payload: { ...TEAM, name: `team-${n}`, shared_with: ['research'] },
        })
      ).name,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/teams/${id}` }),
      update: (id) => ({ method: 'PUT', url: `/api/v1/teams/${id}`, payload: { description: 'changed' } }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/teams/${id}` }),
    },
    expect: { read: SHARED(200), update: OWNER_ADMIN(200), delete: OWNER_ADMIN(200) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/teams/${id}` }),
  },
  {
    type: "memory record in the owner's namespace user:alice",
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: `/api/v1/memory/user:${who}`,
          payload: { key: `k${n}`, content: 'v' },
        })
      ).key,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/memory/user:alice/${id}` }),
      update: (id) => ({ method: 'POST', url: '/api/v1/memory/user:alice', payload: { key: id, content: 'changed' } }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/memory/user:alice/${id}` }),
    },
    expect: { read: OWNER_ADMIN(200), update: OWNER_ADMIN(201), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/memory/user:alice/${id}` }),
  },
  {
    type: 'memory record in the group namespace group:research',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/memory/group:research',
          payload: { key: `k${n}`, content: 'v' },
        })
      ).key,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/memory/group:research/${id}` }),
      update: (id) => ({
        method: 'POST',
        url: '/api/v1/memory/group:research',
        payload: { key: id, content: 'changed' },
      }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/memory/group:research/${id}` }),
    },
    expect: { read: SHARED(200), update: SHARED(201), delete: SHARED(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/memory/group:research/${id}` }),
  },
  {
    type: 'memory resource',
    create: async (app, n, who) =>
      (await created(app, who, { method: 'POST', url: '/api/v1/memory/resources', payload: { name: `res-${n}` } }))
        .memory_id,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/memory/resources/${id}` }),
      update: (id) => ({
        method: 'POST',
        url: `/api/v1/memory/resources/${id}/strategies`,
        payload: { name: 's', type: 'semantic', namespaces: ['n'], config: {} },
      }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/memory/resources/${id}` }),
    },
    expect: { read: EVERYONE(200), update: OWNER_ADMIN(201), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/memory/resources/${id}` }),
  },
  {
    type: 'browser session',
    create: async (app, n, who) =>
      (await created(app, who, { method: 'POST', url: '/api/v1/browser/sessions', payload: { session_id: `b-${n}` } }))
        .session_id,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/browser/sessions/${id}` }),
      // noop has no navigation: the owner passes the ownership check and meets the 501.
      update: (id) => ({
        method: 'POST',
        url: `/api/v1/browser/sessions/${id}/navigate`,
        payload: { url: 'https://example.com/' },
      }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/browser/sessions/${id}` }),
    },
    expect: { read: OWNER_ADMIN(200), update: OWNER_ADMIN(501), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/browser/sessions/${id}` }),
  },
  {
    type: 'code interpreter session',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/code-interpreter/sessions',
          payload: { session_id: `c-${n}` },
        })
      ).session_id,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/code-interpreter/sessions/${id}` }),
      // noop runs no language: the owner passes the ownership check and meets the 501.
      update: (id) => ({
        method: 'POST',
        url: `/api/v1/code-interpreter/sessions/${id}/execute`,
        payload: { code: 'print(1)' },
      }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/code-interpreter/sessions/${id}` }),
    },
    expect: { read: OWNER_ADMIN(200), update: OWNER_ADMIN(501), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/code-interpreter/sessions/${id}` }),
  },
  {
    type: 'credential provider',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/identity/credential-providers',
          payload: { name: `cp-${n}`, provider_type: 'api_key', config: { api_key: 'sk-secret-1234' } },
        })
      ).name,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/identity/credential-providers/${id}` }),
      update: (id) => ({
        method: 'PUT',
        url: `/api/v1/identity/credential-providers/${id}`,
        payload: { config: { api_key: 'sk-other-5678' } },
      }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/identity/credential-providers/${id}` }),
    },
    expect: { read: EVERYONE(200), update: OWNER_ADMIN(200), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/identity/credential-providers/${id}` }),
  },
  {
    type: 'workload identity',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/identity/workload-identities',
          payload: { name: `wi-${n}` },
        })
      ).name,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/identity/workload-identities/${id}` }),
      update: (id) => ({
        method: 'PUT',
        url: `/api/v1/identity/workload-identities/${id}`,
        payload: { allowed_return_urls: ['https://evil.example/'] },
      }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/identity/workload-identities/${id}` }),
    },
    expect: { read: EVERYONE(200), update: OWNER_ADMIN(200), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/identity/workload-identities/${id}` }),
  },
  {
    // Tools have no update route: a tool is replaced by deleting and registering it again.
    type: 'tool',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/tools',
          payload: { name: `tool-${n}`, description: 'd' },
        })
      ).name,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/tools/${id}` }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/tools/${id}` }),
    },
    expect: { read: EVERYONE(200), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/tools/${id}` }),
  },
  {
    type: 'evaluator',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/evaluations/evaluators',
          payload: { name: `ev-${n}`, evaluator_type: 'llm_judge' },
        })
      ).evaluator_id,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/evaluations/evaluators/${id}` }),
      update: (id) => ({
        method: 'PUT',
        url: `/api/v1/evaluations/evaluators/${id}`,
        payload: { description: 'changed' },
      }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/evaluations/evaluators/${id}` }),
    },
    expect: { read: EVERYONE(200), update: OWNER_ADMIN(200), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/evaluations/evaluators/${id}` }),
  },
  {
    // Scores are never changed in place: recorded, read, deleted.
    type: 'evaluation score (recorder provider)',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/evaluations/scores',
          headers: RECORDER,
          payload: { name: `score-${n}`, value: 0.5 },
        })
      ).score_id,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/evaluations/scores/${id}`, headers: RECORDER }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/evaluations/scores/${id}`, headers: RECORDER }),
    },
    expect: { read: EVERYONE(200), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/evaluations/scores/${id}`, headers: RECORDER }),
  },
  {
    // Online configs have no update route.
    type: 'online evaluation config (recorder provider)',
    create: async (app, n, who) =>
      (
        await created(app, who, {
          method: 'POST',
          url: '/api/v1/evaluations/online-configs',
          headers: RECORDER,
          payload: { name: `oc-${n}`, evaluator_ids: ['ev'] },
        })
      ).config_id,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/evaluations/online-configs/${id}`, headers: RECORDER }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/evaluations/online-configs/${id}`, headers: RECORDER }),
    },
    expect: { read: EVERYONE(200), delete: OWNER_ADMIN(204) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/evaluations/online-configs/${id}`, headers: RECORDER }),
  },
  {
    // Traces are recorded under a user id and never changed or deleted through the API.
    type: 'observability trace',
    create: async (app, n, who) => {
      await created(
        app,
        who,
        {
          method: 'POST',
          url: '/api/v1/observability/traces',
          payload: { trace_id: `tr-${n}`, name: 'run', user_id: who },
        },
        202,
      );
      return `tr-${n}`;
    },
    ops: { read: (id) => ({ method: 'GET', url: `/api/v1/observability/traces/${id}` }) },
    expect: { read: OWNER_ADMIN(200) },
    probe: (id) => ({ method: 'GET', url: `/api/v1/observability/traces/${id}` }),
  },
  {
    // Only admins create engines (spec 4.6), so the "owner" is the admin who made it and other admins share the rights.
    type: 'policy engine (admin-made)',
    creator: 'admin',
    create: async (app, n, who) =>
      (await created(app, who, { method: 'POST', url: '/api/v1/policy/engines', payload: { name: `pe-${n}` } }))
        .engine_id,
    ops: {
      read: (id) => ({ method: 'GET', url: `/api/v1/policy/engines/${id}` }),
      update: (id) => ({
        method: 'POST',
        url: `/api/v1/policy/engines/${id}/policies`,
        payload: { policy_body: 'permit(principal, action, resource);' },
      }),
      delete: (id) => ({ method: 'DELETE', url: `/api/v1/policy/engines/${id}` }),
    },
    expect: {
      read: EVERYONE(200),
      update: { ...ADMIN_ONLY(201), owner: 403 },
      delete: { ...ADMIN_ONLY(204), owner: 403 },
    },
    probe: (id) => ({ method: 'GET', url: `/api/v1/policy/engines/${id}` }),
  },
];

t.test(
  'ownership matrix: every platform resource x {owner, other, member, admin} x {read, update, delete}',
  async (t) => {
    const app = await makeApp(t, {
      ...apiKeyUsers(USERS),
      provider_packages: [recorderPackage()],
      providers: { ...apiKeyUsers(USERS).providers, evaluations: { instances: { recorder: { type: 'recorder' } } } },
    });
    let n = 0;
    for (const c of CASES) {
      t.test(c.type, async (t) => {
        for (const op of OPS) {
          const make = c.ops[op];
          const expected = c.expect[op];
          if (!make || !expected) continue;
          for (const actor of ACTORS) {
            const creator = ACTOR_ID[c.creator ?? 'owner'];
            const id = await c.create(app, ++n, creator);
            const res = await send(app, ACTOR_ID[actor], make(id));
            t.equal(
              res.statusCode,
              expected[actor],
              `${op} as ${actor} (${ACTOR_ID[actor]})${res.statusCode === expected[actor] ? '' : `: ${res.body.slice(0, 300)}`}`,
            );
            if (res.statusCode >= 400) {
              const body = res.json();
              t.type(body.detail, 'string', `${op} as ${actor}: error detail`);
              t.match(body.code, /^SB_ERR_/, `${op} as ${actor}: coded error`);
            }
            if (expected[actor] === 403 && op !== 'read') {
              t.equal(
                (await send(app, 'root', c.probe(id))).statusCode,
                200,
                `${op} refused to ${actor}: the record is still there`,
              );
            }
            if (op === 'delete' && expected[actor] < 300) {
              t.equal((await send(app, 'root', c.probe(id))).statusCode, 404, `${op} as ${actor}: the record is gone`);
            }
          }
        }
      });
    }
  },
);

/** Lists of private (or shared) records show each caller only what the matrix lets them read. */
const LISTS: Array<{
  type: string;
  create: (app: FastifyInstance, n: number, who: string) => Promise<string>;
  url: string;
  ids: (body: any) => string[];
  sees: Record<Actor, boolean>;
}> = [
  {
    type: 'code interpreter sessions',
    create: CASES.find((c) => c.type === 'code interpreter session')!.create,
    url: '/api/v1/code-interpreter/sessions',
    ids: (b) => b.sessions.map((s: { session_id: string }) => s.session_id),
    sees: { owner: true, other: false, member: false, admin: true },
  },
  {
    type: 'browser sessions',
    create: CASES.find((c) => c.type === 'browser session')!.create,
    url: '/api/v1/browser/sessions',
    ids: (b) => b.sessions.map((s: { session_id: string }) => s.session_id),
    sees: { owner: true, other: false, member: false, admin: true },
  },
  {
    type: 'agents shared with research',
    create: CASES.find((c) => c.type.startsWith('agent'))!.create,
    url: '/api/v1/agents',
    ids: (b) => b.agents.map((a: { name: string }) => a.name),
    sees: { owner: true, other: false, member: true, admin: true },
  },
  {
    type: 'traces',
    create: CASES.find((c) => c.type === 'observability trace')!.create,
    url: '/api/v1/observability/traces',
    ids: (b) => b.traces.map((x: { trace_id: string }) => x.trace_id),
    sees: { owner: true, other: false, member: false, admin: true },
  },
];

t.test('lists show each caller only the records they may read', async (t) => {
  const app = await makeApp(t, apiKeyUsers(USERS));
  for (const [i, l] of LISTS.entries()) {
    const id = await l.create(app, 1000 + i, 'alice');
    for (const actor of ACTORS) {
      const res = await send(app, ACTOR_ID[actor], { method: 'GET', url: l.url });
      t.equal(res.statusCode, 200, `${l.type}: list as ${actor}`);
      t.equal(
        l.ids(res.json()).includes(id),
        l.sees[actor],
        `${l.type}: ${actor} ${l.sees[actor] ? 'sees' : 'does not see'} alice's record`,
      );
    }
  }
});

t.test('a create whose owner cannot be recorded is undone: 503, nothing stored', async (t) => {
  const base = await openStore({ backend: 'memory' });
  let ownersDown = false;
  // The core store with only its `owners` collection failing on writes, as a store outage would.
  const store = new Proxy(base, {
    get(target, prop) {
      if (prop !== 'collection') return Reflect.get(target, prop, target);
      return (name: string) => {
        const col = target.collection(name);
        if (name !== 'owners') return col;
        return new Proxy(col, {
          get(c, p) {
            if (p === 'set' && ownersDown)
              return async () =>
                Promise.reject(unavailable('SB_ERR_STORE_UNAVAILABLE', "Store 'test' is unavailable (set): down"));
            const v = Reflect.get(c, p, c);
            return typeof v === 'function' ? v.bind(c) : v;
          },
        });
      };
    },
  }) as Store;
  const app = await makeApp(t, apiKeyUsers(USERS), { store });
  ownersDown = true;
  const creates: Array<[string, Req, Req]> = [
    [
      'tool',
      { method: 'POST', url: '/api/v1/tools', payload: { name: 'undone' } },
      { method: 'GET', url: '/api/v1/tools/undone' },
    ],
    [
      'code session',
      { method: 'POST', url: '/api/v1/code-interpreter/sessions', payload: { session_id: 'undone' } },
      { method: 'GET', url: '/api/v1/code-interpreter/sessions/undone' },
    ],
    [
      'credential provider',
      {
        method: 'POST',
        url: '/api/v1/identity/credential-providers',
        payload: { name: 'undone', provider_type: 'oauth2' },
      },
      { method: 'GET', url: '/api/v1/identity/credential-providers/undone' },
    ],
    [
      'workload identity',
      { method: 'POST', url: '/api/v1/identity/workload-identities', payload: { name: 'undone' } },
      { method: 'GET', url: '/api/v1/identity/workload-identities/undone' },
    ],
  ];
  for (const [what, create, probe] of creates) {
    const res = await send(app, 'alice', create);
    t.equal(res.statusCode, 503, `${what}: the store outage is a 503`);
    t.match(res.json(), { code: 'SB_ERR_STORE_UNAVAILABLE', detail: /Store 'test' is unavailable/ });
    t.equal((await send(app, 'root', probe)).statusCode, 404, `${what}: the record was undone`);
  }
  ownersDown = false;
  t.equal((await send(app, 'alice', creates[0][1])).statusCode, 201, 'the same create works once the store is back');
  t.equal(
    (await send(app, 'bob', { method: 'DELETE', url: '/api/v1/tools/undone' })).statusCode,
    403,
    'and records its owner',
  );
});

t.test(
  "the secrets a credential provider holds and a workload's tokens are for the record's owner and admins",
  async (t) => {
    // The real oidc identity provider: API keys and workload tokens need no call to its issuer, which is never reached.
    const app = await makeApp(t, {
      ...apiKeyUsers(USERS),
      providers: {
        ...apiKeyUsers(USERS).providers,
        identity: { default: 'oidc', instances: { oidc: { type: 'oidc', options: { issuer: 'http://127.0.0.1:9' } } } },
      },
    });
    const post = (who: string, path: string, payload: unknown) =>
      send(app, who, { method: 'POST', url: `/api/v1/identity${path}`, payload });
    const SECRET = 'sk-alice-held-0123456789';
    t.equal((await post('alice', '/workload-identities', { name: 'alice-agent' })).statusCode, 201);
    t.equal(
      (
        await post('alice', '/credential-providers', {
          name: 'alice-keys',
          provider_type: 'api_key',
          config: { api_key: SECRET },
        })
      ).statusCode,
      201,
    );
    t.equal((await post('bob', '/workload-identities', { name: 'bob-agent' })).statusCode, 201);
    const bobToken = await post('bob', '/workload-token', { workload_name: 'bob-agent' });
    t.equal(bobToken.statusCode, 200, 'the owner of a workload gets its token');

    const stolenWorkload = await post('bob', '/workload-token', { workload_name: 'alice-agent' });
    t.equal(stolenWorkload.statusCode, 403, "another user's workload token is refused");
    t.equal(stolenWorkload.json().code, 'SB_ERR_IDENTITY_FORBIDDEN');
    for (const path of ['/api-key', '/token']) {
      const res = await post('bob', path, {
        credential_provider: 'alice-keys',
        workload_token: bobToken.json().workload_token,
      });
      t.equal(res.statusCode, 403, `${path}: another user's credential provider is refused`);
      t.match(res.json(), {
        code: 'SB_ERR_IDENTITY_FORBIDDEN',
        detail: /Only the owner of credential provider 'alice-keys'/,
      });
      t.notMatch(res.body, SECRET);
    }

    const aliceToken = (await post('alice', '/workload-token', { workload_name: 'alice-agent' })).json().workload_token;
    t.same(
      (await post('alice', '/api-key', { credential_provider: 'alice-keys', workload_token: aliceToken })).json(),
      { credential_provider: 'alice-keys', api_key: SECRET },
      'the owner gets the key',
    );
    t.equal(
      (await post('root', '/api-key', { credential_provider: 'alice-keys', workload_token: aliceToken })).statusCode,
      200,
      'an admin may use it',
    );
    t.equal(
      (await post('bob', '/api-key', { credential_provider: 'nobody-has-this', workload_token: aliceToken }))
        .statusCode,
      404,
      'an unknown name is still the provider 404',
    );
  },
);

t.test('owners outlive a restart on the SQLite store, beside a durable provider', async (t) => {
  const dataDir = tempDir();
  const config = {
    ...apiKeyUsers(USERS),
    providers: {
      ...apiKeyUsers(USERS).providers,
      memory: { default: 'durable', instances: { durable: { type: 'keyv' } } },
    },
  };
  const first = await makeApp(t, config, {
    env: { DATA_DIR: dataDir },
    store: await openStore({ backend: 'sqlite', dataDir }),
  });
  const id = (
    await created(first, 'alice', { method: 'POST', url: '/api/v1/memory/resources', payload: { name: 'kept' } })
  ).memory_id;
  await first.close();
  await first.sb.store.close();

  const store = await openStore({ backend: 'sqlite', dataDir });
  t.teardown(() => store.close());
  const second = await makeApp(t, config, { env: { DATA_DIR: dataDir }, store });
  const url = `/api/v1/memory/resources/${id}`;
  t.equal((await send(second, 'bob', { method: 'GET', url })).statusCode, 200, 'the resource came back');
  t.equal((await send(second, 'bob', { method: 'DELETE', url })).statusCode, 403, 'and still belongs to alice');
  t.equal((await send(second, 'alice', { method: 'DELETE', url })).statusCode, 204);
});
