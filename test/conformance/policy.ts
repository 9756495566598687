import type { AuthorizationRequest, PolicyProvider } from '../../core/primitives/policy.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

/** Case names, so a provider's test can skip them by name with a reason. */
export const POLICY_CASES = {
  engines: 'engine lifecycle: create, get, list, delete',
  policies: 'policy lifecycle inside an engine: create, get, list, update, delete',
  unknownEngine: 'policies of an unknown engine are undefined, deletes false',
  cascade: 'deleting an engine deletes its policies',
  paging: 'engine and policy lists page by max_results and next_token',
  badToken: 'a next_token that no page produced is rejected with 400',
  enforcement: 'enforcement status names an engine or null, and a boolean',
  generations: 'policy generation: start, list, get, assets',
  authorize: 'authorize: a permit-all policy allows, an empty engine denies',
  groups: 'authorize: a permit for a group admits its members only, per action',
  forbidWins: 'authorize: forbid wins over permit',
  contextCondition: 'authorize: a when-condition on context (tool argument, hour) decides',
  updateApplies: 'authorize: an updated or deleted policy decides the very next call',
  badBody: 'a policy_body that does not parse is a 400 with its position, and nothing is stored',
  unsupported: 'capabilities declared false have no method or reject with 501',
} as const;

export interface PolicySuiteOptions extends SuiteOptions<PolicyProvider> {
  /** A policy body in the provider's language that permits everything (default: Cedar). */
  permitAll?: string;
}

const status = (err: unknown) => (err as { statusCode?: number }).statusCode;

/** The policy suite: every policy provider runs it with its own runner and named skips. */
export async function policySuite(t: Runner, opts: PolicySuiteOptions): Promise<void> {
  const run = caseRunner(t, opts);
  const permitAll = opts.permitAll ?? 'permit(principal, action, resource);';

  await run(POLICY_CASES.engines, async (t, p) => {
    const e = await p.createEngine({ name: 'conf-engine', description: 'for conformance' });
    t.match(e, { name: 'conf-engine', description: 'for conformance' });
    t.ok(e.engine_id.length > 0, 'engine_id assigned');
    t.ok(!Number.isNaN(Date.parse(e.created_at)), 'created_at is a timestamp');
    t.same(await p.getEngine(e.engine_id), e, 'get returns what create returned');
    const list = await p.listEngines({ max_results: 100 });
    t.same(
      list.engines.map((x) => x.engine_id),
      [e.engine_id],
    );
    t.equal(list.next_token, null, 'one page only');
    t.equal(await p.deleteEngine(e.engine_id), true);
    t.equal(await p.getEngine(e.engine_id), undefined, 'deleted engine is gone');
    t.equal(await p.deleteEngine(e.engine_id), false, 'deleting twice reports false');
  });

  await run(POLICY_CASES.policies, async (t, p) => {
    const e = await p.createEngine({ name: 'conf', description: '' });
    const pol = await p.createPolicy(e.engine_id, { policy_body: permitAll, description: 'allow all' });
    t.ok(pol, 'created');
    t.match(pol, { engine_id: e.engine_id, policy_body: permitAll, description: 'allow all' });
    t.same(await p.getPolicy(e.engine_id, pol!.policy_id), pol);
    t.same(
      (await p.listPolicies(e.engine_id, { max_results: 100 }))?.policies.map((x) => x.policy_id),
      [pol!.policy_id],
    );
    const upd = await p.updatePolicy(e.engine_id, pol!.policy_id, { description: 'still allow all' });
    t.match(
      upd,
      { policy_id: pol!.policy_id, policy_body: permitAll, description: 'still allow all' },
      'update keeps fields not given',
    );
    t.ok(upd!.updated_at >= pol!.updated_at, 'updated_at moves forward');
    t.equal(
      await p.updatePolicy(e.engine_id, 'nope', { description: 'x' }),
      undefined,
      'unknown policy update is undefined',
    );
    t.equal(await p.deletePolicy(e.engine_id, pol!.policy_id), true);
    t.equal(await p.getPolicy(e.engine_id, pol!.policy_id), undefined);
    t.equal(await p.deletePolicy(e.engine_id, pol!.policy_id), false);
  });

  await run(POLICY_CASES.unknownEngine, async (t, p) => {
    t.equal(await p.createPolicy('no-such-engine', { policy_body: permitAll, description: '' }), undefined);
    t.equal(await p.listPolicies('no-such-engine', { max_results: 10 }), undefined);
    t.equal(await p.getPolicy('no-such-engine', 'x'), undefined);
    t.equal(await p.deletePolicy('no-such-engine', 'x'), false);
  });

  await run(POLICY_CASES.cascade, async (t, p) => {
    const e = await p.createEngine({ name: 'conf', description: '' });
    const pol = await p.createPolicy(e.engine_id, { policy_body: permitAll, description: '' });
    await p.deleteEngine(e.engine_id);
    t.equal(await p.getPolicy(e.engine_id, pol!.policy_id), undefined, 'policy went with its engine');
  });

  await run(POLICY_CASES.paging, async (t, p) => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await p.createEngine({ name: `page-${i}`, description: '' })).engine_id);
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await p.listEngines({ max_results: 2, next_token: token });
      t.ok(page.engines.length <= 2, 'page size respected');
      seen.push(...page.engines.map((x) => x.engine_id));
      token = page.next_token ?? undefined;
      pages++;
    } while (token && pages < 10);
    t.equal(pages, 3, '5 engines in pages of 2');
    t.same([...seen].sort(), [...made].sort(), 'every engine exactly once');
    const e = made[0]!;
    for (let i = 0; i < 3; i++) await p.createPolicy(e, { policy_body: permitAll, description: `p${i}` });
    const first = await p.listPolicies(e, { max_results: 2 });
    t.equal(first?.policies.length, 2);
    t.ok(first?.next_token, 'a second page is announced');
    const second = await p.listPolicies(e, { max_results: 2, next_token: first!.next_token! });
    t.equal(second?.policies.length, 1);
    t.equal(second?.next_token, null);
  });

  await run(POLICY_CASES.badToken, async (t, p) => {
    const err = await p.listEngines({ max_results: 2, next_token: '!!not-a-token!!' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err, 'rejected');
    t.equal(status(err), 400);
  });

  await run(POLICY_CASES.enforcement, async (t, p) => {
    const s = await p.enforcement();
    t.equal(typeof s.enabled, 'boolean');
    t.ok(s.engine_id === null || typeof s.engine_id === 'string');
    if (!p.capabilities.enforcement)
      t.equal(s.enabled, false, 'a provider that cannot authorize never reports enforcement on');
  });

  await run(POLICY_CASES.generations, async (t, p) => {
    const e = await p.createEngine({ name: 'gen', description: '' });
    const g = await p.startGeneration!(e.engine_id, { content: 'allow everyone to read memory' });
    t.equal(g.engine_id, e.engine_id);
    t.ok(
      (await p.listGenerations!(e.engine_id, { max_results: 10 })).generations.some(
        (x) => x.generation_id === g.generation_id,
      ),
    );
    t.equal((await p.getGeneration!(e.engine_id, g.generation_id))?.generation_id, g.generation_id);
    t.equal(await p.getGeneration!(e.engine_id, 'nope'), undefined);
  });

  await run(POLICY_CASES.authorize, async (t, p) => {
    const e = await p.createEngine({ name: 'authz', description: '' });
    const req = { principal: 'User::"alice"', action: 'Action::"memory:store"', resource: 'memory/ns' };
    t.equal((await p.authorize!({ ...req, engine_id: e.engine_id })).decision, 'deny', 'no policy: deny');
    await p.createPolicy(e.engine_id, { policy_body: permitAll, description: '' });
    t.equal((await p.authorize!({ ...req, engine_id: e.engine_id })).decision, 'allow');
  });

  const ask = (
    p: PolicyProvider,
    engine_id: string,
    principal: string,
    action: string,
    extra: Partial<AuthorizationRequest> = {},
  ) =>
    p.authorize!({
      principal,
      action: `Action::"${action}"`,
      resource: 'Namespace::"notes"',
      engine_id,
      ...extra,
    }).then((d) => d.decision);

  await run(POLICY_CASES.groups, async (t, p) => {
    const e = await p.createEngine({ name: 'groups', description: '' });
    await p.createPolicy(e.engine_id, {
      policy_body: 'permit(principal in Group::"research", action == Action::"memory:search", resource);',
      description: '',
    });
    const research = { principal_parents: ['Group::"research"'] };
    t.equal(await ask(p, e.engine_id, 'User::"rita"', 'memory:search', research), 'allow', 'a member may search');
    t.equal(await ask(p, e.engine_id, 'User::"rita"', 'memory:store', research), 'deny', 'but not store');
    t.equal(await ask(p, e.engine_id, 'User::"olga"', 'memory:search'), 'deny', 'a non-member may not search');
    t.equal(
      await ask(p, e.engine_id, 'User::"olga"', 'memory:search', { principal_parents: ['Group::"sales"'] }),
      'deny',
      'nor a member of another group',
    );
  });

  await run(POLICY_CASES.forbidWins, async (t, p) => {
    const e = await p.createEngine({ name: 'forbid', description: '' });
    await p.createPolicy(e.engine_id, { policy_body: permitAll, description: '' });
    await p.createPolicy(e.engine_id, {
      policy_body: 'forbid(principal == User::"mallory", action, resource);',
      description: '',
    });
    t.equal(await ask(p, e.engine_id, 'User::"alice"', 'memory:store'), 'allow');
    const d = await p.authorize!({
      principal: 'User::"mallory"',
      action: 'Action::"memory:store"',
      resource: 'Namespace::"notes"',
      engine_id: e.engine_id,
    });
    t.equal(d.decision, 'deny', 'the forbid beats the permit-all');
    t.equal(d.reasons.length, 1, 'the forbidding policy is named');
  });

  await run(POLICY_CASES.contextCondition, async (t, p) => {
    const e = await p.createEngine({ name: 'ctx', description: '' });
    await p.createPolicy(e.engine_id, {
      policy_body:
        'permit(principal, action == Action::"tools:invoke", resource) when { context has arguments && context.arguments has path && context.arguments.path like "/tmp/*" };',
      description: 'tools may touch /tmp only',
    });
    await p.createPolicy(e.engine_id, {
      policy_body:
        'permit(principal, action == Action::"memory:store", resource) when { context.hour_utc >= 9 && context.hour_utc < 17 };',
      description: 'office hours',
    });
    const tool = (path: unknown) =>
      ask(p, e.engine_id, 'User::"alice"', 'tools:invoke', {
        context: { arguments: { path, ratio: 0.5, nothing: null } },
      });
    t.equal(await tool('/tmp/a.txt'), 'allow', 'argument inside /tmp');
    t.equal(await tool('/etc/passwd'), 'deny', 'argument outside /tmp');
    t.equal(
      await ask(p, e.engine_id, 'User::"alice"', 'memory:store', { context: { hour_utc: 10 } }),
      'allow',
      'inside office hours',
    );
    t.equal(
      await ask(p, e.engine_id, 'User::"alice"', 'memory:store', { context: { hour_utc: 22 } }),
      'deny',
      'outside office hours',
    );
  });

  await run(POLICY_CASES.updateApplies, async (t, p) => {
    const e = await p.createEngine({ name: 'upd', description: '' });
    const pol = await p.createPolicy(e.engine_id, {
      policy_body: 'permit(principal, action == Action::"memory:search", resource);',
      description: '',
    });
    t.equal(await ask(p, e.engine_id, 'User::"alice"', 'memory:store'), 'deny');
    await p.updatePolicy(e.engine_id, pol!.policy_id, {
      policy_body: 'permit(principal, action == Action::"memory:store", resource);',
    });
    t.equal(await ask(p, e.engine_id, 'User::"alice"', 'memory:store'), 'allow', 'the update decides the next call');
    await p.deletePolicy(e.engine_id, pol!.policy_id);
    t.equal(await ask(p, e.engine_id, 'User::"alice"', 'memory:store'), 'deny', 'the delete decides the next call');
  });

  await run(POLICY_CASES.badBody, async (t, p) => {
    const e = await p.createEngine({ name: 'bad', description: '' });
    const err = (await p
      .createPolicy(e.engine_id, {
        policy_body: 'permit(principal, action, resource)\nwhenn { true };',
        description: '',
      })
      .then(
        () => undefined,
        (x: unknown) => x,
      )) as { statusCode?: number; message?: string } | undefined;
    t.equal(err?.statusCode, 400, 'rejected with 400');
    t.match(err?.message, /line 2, column \d+/, 'the detail gives the position');
    t.match(err?.message, /whenn/, "the detail carries the engine's message");
    t.same((await p.listPolicies(e.engine_id, { max_results: 10 }))?.policies, [], 'nothing stored');
    const pol = await p.createPolicy(e.engine_id, { policy_body: permitAll, description: '' });
    const upd = await p.updatePolicy(e.engine_id, pol!.policy_id, { policy_body: 'forbid(principal' }).then(
      () => undefined,
      (x: unknown) => x,
    );
    t.equal(status(upd), 400, 'a bad update is rejected too');
    t.equal(
      (await p.getPolicy(e.engine_id, pol!.policy_id))?.policy_body,
      permitAll,
      'and the stored policy is unchanged',
    );
  });

  await run(POLICY_CASES.unsupported, async (t, p) => {
    t.equal(typeof p.capabilities.generations, 'boolean', 'generations capability declared');
    t.equal(typeof p.capabilities.enforcement, 'boolean', 'enforcement capability declared');
    const e = await p.createEngine({ name: 'x', description: '' });
    const optional: Array<[string, (() => Promise<unknown>) | undefined]> = [];
    if (!p.capabilities.generations)
      optional.push(['startGeneration', p.startGeneration && (() => p.startGeneration!(e.engine_id, {}))]);
    if (!p.capabilities.enforcement)
      optional.push(['authorize', p.authorize && (() => p.authorize!({ principal: 'a', action: 'b', resource: 'c' }))]);
    for (const [method, call] of optional) {
      if (call)
        t.equal(
          status(
            await call().then(
              () => undefined,
              (err: unknown) => err,
            ),
          ),
          501,
          `${method} rejects with 501`,
        );
      else t.equal((p as unknown as Record<string, unknown>)[method], undefined, `${method} is absent`);
    }
  });
}
