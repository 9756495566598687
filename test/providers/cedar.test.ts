import t from 'tap';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { openStore, type Store } from '../../core/store.ts';
import type { PolicyProvider } from '../../core/primitives/policy.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { cedarPolicy } from '../../providers/cedar/index.ts';
import { POLL_MS } from '../../providers/cedar/policy-sets.ts';
import { POLICY_CASES, policySuite } from '../conformance/policy.ts';
import type { Runner } from '../conformance/kit.ts';
import { tempDir } from '../helpers/app.ts';

const ctx = (store: Store): ProviderContext => ({
  store,
  logger: pino({ level: 'silent' }),
  dataDir: tempDir(),
  lookup: () => undefined,
});
const GENERATIONS = {
  reason: 'policy generation is a managed-cloud feature (capability generations is false on cedar)',
  tests: [POLICY_CASES.generations],
};

t.test('cedar on SQLite passes the policy conformance suite', (t) =>
  policySuite(t as unknown as Runner, {
    make: async () => {
      const store = await openStore({ backend: 'sqlite', dataDir: tempDir() });
      const p = await cedarPolicy.create('cedar', {}, ctx(store));
      return Object.assign(Object.create(p), {
        close: async () => (await p.close(), await store.close()),
      }) as PolicyProvider;
    },
    skip: [GENERATIONS],
  }),
);

t.test('engines and policies survive a restart on the same SQLite file', async (t) => {
  const dir = tempDir();
  const s1 = await openStore({ backend: 'sqlite', dataDir: dir });
  const p1 = await cedarPolicy.create('cedar', {}, ctx(s1));
  const e = await p1.createEngine({ name: 'durable', description: '' });
  const pol = await p1.createPolicy(e.engine_id, {
    policy_body: 'permit(principal == User::"alice", action, resource);',
    description: 'alice',
  });
  await p1.close();
  await s1.close();
  const s2 = await openStore({ backend: 'sqlite', dataDir: dir });
  const p2 = await cedarPolicy.create('cedar', {}, ctx(s2));
  t.teardown(async () => (await p2.close(), await s2.close()));
  t.same(await p2.getEngine(e.engine_id), e);
  t.same(await p2.getPolicy(e.engine_id, pol!.policy_id), pol);
  t.equal(
    (
      await p2.authorize!({
        principal: 'User::"alice"',
        action: 'Action::"memory:store"',
        resource: 'Namespace::"n"',
        engine_id: e.engine_id,
      })
    ).decision,
    'allow',
  );
});

t.test('with a Cedar schema, a policy naming an unknown action is refused', async (t) => {
  const store = await openStore({ backend: 'memory' });
  const schema =
    'entity User; entity Namespace; action "memory:store" appliesTo { principal: User, resource: Namespace };';
  const p = await cedarPolicy.create('cedar', { schema }, ctx(store));
  t.teardown(() => p.close());
  const e = await p.createEngine({ name: 's', description: '' });
  t.ok(
    await p.createPolicy(e.engine_id, {
      policy_body: 'permit(principal, action == Action::"memory:store", resource);',
      description: '',
    }),
    'a policy the schema knows',
  );
  const err = await p
    .createPolicy(e.engine_id, {
      policy_body: 'permit(principal, action == Action::"memory:erase", resource);',
      description: '',
    })
    .then(
      () => undefined,
      (x: unknown) => x as { statusCode: number; code: string },
    );
  t.equal(err?.statusCode, 400);
  t.equal(err?.code, 'SB_ERR_POLICY_SCHEMA_MISMATCH');
  t.equal((await p.listPolicies(e.engine_id, { max_results: 10 }))?.policies.length, 1, 'nothing more stored');
});

t.test('two replicas on Redis: a policy written on one decides on the other within 1 s', async (t) => {
  const name = `cedar-${randomUUID()}`;
  const s1 = await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' });
  const s2 = await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' });
  const a = await cedarPolicy.create(name, {}, ctx(s1));
  const b = await cedarPolicy.create(name, {}, ctx(s2));
  t.teardown(async () => {
    const e = await a.listEngines({ max_results: 100 });
    for (const x of e.engines) await a.deleteEngine(x.engine_id);
    await s1.collection(`policy:${name}:meta`).clear();
    await a.close();
    await b.close();
    await s1.close();
    await s2.close();
  });
  const e = await a.createEngine({ name: 'shared', description: '' });
  const q = {
    principal: 'User::"alice"',
    action: 'Action::"memory:store"',
    resource: 'Namespace::"n"',
    engine_id: e.engine_id,
  };
  t.equal((await b.authorize!(q)).decision, 'deny', 'replica b starts following with no policy');
  await a.createPolicy(e.engine_id, { policy_body: 'permit(principal, action, resource);', description: '' });
  const written = Date.now();
  let seen: number | undefined;
  // 5 s only guards against a hang; the 1 s bound is the poll period below, not a stopwatch here.
  while (Date.now() - written < 5000) {
    if ((await b.authorize!(q)).decision === 'allow') {
      seen = Date.now() - written;
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  t.ok(seen !== undefined, 'replica b enforces the new policy');
  t.comment(`replica b noticed after ${seen} ms`);
  t.ok(POLL_MS * 2 <= 1000, 'a replica reads the version key at least twice a second');
});
