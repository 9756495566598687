import pino from 'pino';
import { openStore } from '../core/store.ts';
import type { PolicyProvider } from '../core/primitives/policy.ts';
import { cedarPolicy } from '../providers/cedar/index.ts';
import { load, median, percentiles, type BenchModule, type BenchRow } from './harness.ts';
import { startSwitchboard, type Spawned } from './processes.ts';

/** Ten policies of the kind an operator writes: one permits the benched route, the others concern other actions. */
const TEN = [
  'permit(principal, action == Action::"memory:retrieve", resource == Namespace::"hot");',
  'permit(principal, action == Action::"memory:store", resource == Namespace::"hot");',
  ...Array.from(
    { length: 8 },
    (_, i) =>
      `permit(principal in Group::"team${i}", action == Action::"memory:store", resource == Namespace::"ns${i}") when { context.hour_utc >= ${i} };`,
  ),
];

const policyConfig = (enforce: boolean) => ({
  providers: {
    policy: {
      default: 'cedar',
      instances: {
        cedar: { type: 'cedar', options: enforce ? { enforce: true, engine: 'main', bootstrap_policies: TEN } : {} },
      },
    },
  },
});

const ACTIONS = ['memory', 'llm', 'tools', 'agents', 'browser'].flatMap((p) =>
  ['store', 'search', 'list', 'get', 'delete'].map((o) => `${p}:${o}`),
);

/**
 * In-process decisions against one engine of 1,000 policies spread over 25
 * actions and 1,000 groups (pre-parsed sets). Every question is distinct
 * (its own principal), so the decision memo never answers: this is the engine.
 */
async function decisions(): Promise<BenchRow> {
  const store = await openStore({ backend: 'memory' });
  const p = (await cedarPolicy.create(
    'bench',
    {},
    { store, logger: pino({ level: 'silent' }), dataDir: '/tmp', lookup: () => undefined },
  )) as PolicyProvider;
  try {
    const e = await p.createEngine({ name: 'big', description: '' });
    for (let i = 0; i < 1000; i++) {
      await p.createPolicy(e.engine_id, {
        policy_body: `permit(principal in Group::"g${i}", action == Action::"${ACTIONS[i % ACTIONS.length]}", resource == Namespace::"ns${i}") when { context.hour_utc >= ${i % 24} };`,
        description: '',
      });
    }
    const q = (n: number) => ({
      engine_id: e.engine_id,
      principal: `User::"u${n}"`,
      principal_parents: ['Group::"g500"'],
      action: `Action::"${ACTIONS[500 % ACTIONS.length]}"`,
      resource: 'Namespace::"ns500"',
      context: { hour_utc: 23, ip: '127.0.0.1' },
    });
    if ((await p.authorize!(q(-1))).decision !== 'allow') throw new Error('the benched decision should be allow');
    for (let i = 0; i < 300; i++) await p.authorize!(q(-2 - i));
    const samples: number[] = [];
    for (let i = 0; i < 3000; i++) {
      const t0 = process.hrtime.bigint();
      await p.authorize!(q(i));
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const s = percentiles(samples);
    return {
      group: 'policy',
      name: 'Cedar decision, engine of 1,000 policies over 25 actions (in process, uncached)',
      p50_ms: s.p50,
      p99_ms: s.p99,
      goal: 'p50 < 0.3 ms',
      note: `${samples.length} distinct sequential questions: ${s.p50 < 0.3 ? 'met' : 'NOT met'}`,
    };
  } finally {
    await p.close();
    await store.close();
  }
}

/**
 * A routed memory retrieve with enforcement on (10 policies) against the same
 * route with enforcement off, two Switchboards side by side, rounds alternating
 * which goes first; the goal is judged on the median of per-round ratios.
 */
const bench: BenchModule = async () => {
  let off: Spawned | undefined;
  let on: Spawned | undefined;
  try {
    off = await startSwitchboard(policyConfig(false));
    on = await startSwitchboard(policyConfig(true));
    const json = { 'content-type': 'application/json' };
    for (const sb of [off, on]) {
      const put = await fetch(`${sb.base}/api/v1/memory/hot`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ key: 'k1', content: 'a record to read back' }),
      });
      if (put.status !== 201) throw new Error(`store answered ${put.status}: ${await put.text()}`);
    }
    const denied = await fetch(`${on.base}/api/v1/memory/other/k1`);
    await denied.text();
    if (denied.status !== 403)
      throw new Error(
        `a retrieve no policy permits answered ${denied.status}: enforcement is not on in the benched instance`,
      );
    await load({ url: `${off.base}/api/v1/memory/hot/k1`, duration: 1 });
    await load({ url: `${on.base}/api/v1/memory/hot/k1`, duration: 1 });
    const rounds = Number(process.env.BENCH_POLICY_ROUNDS ?? 3);
    const ratios: number[] = [];
    let last = {
      off: undefined as Awaited<ReturnType<typeof load>> | undefined,
      on: undefined as Awaited<ReturnType<typeof load>> | undefined,
    };
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      const r: Record<'off' | 'on', Awaited<ReturnType<typeof load>>> = {} as never;
      for (const side of order)
        r[side] = await load({ url: `${(side === 'off' ? off : on).base}/api/v1/memory/hot/k1`, duration: 3 });
      if (r.on.non2xx || r.off.non2xx)
        throw new Error(
          `non-2xx answers in round ${i} (on ${r.on.non2xx}, off ${r.off.non2xx}): the rows would time errors`,
        );
      ratios.push(r.on.rps / r.off.rps);
      last = r;
    }
    const ratio = median(ratios);
    return [
      {
        group: 'policy',
        name: 'GET /memory/{ns}/{key}, enforcement off (baseline)',
        rps: last.off!.rps,
        p50_ms: last.off!.p50_ms,
        p99_ms: last.off!.p99_ms,
        ratio: 1,
        goal: 'baseline',
      },
      {
        group: 'policy',
        name: 'GET /memory/{ns}/{key}, Cedar enforcement on (10 policies)',
        rps: last.on!.rps,
        p50_ms: last.on!.p50_ms,
        p99_ms: last.on!.p99_ms,
        ratio,
        goal: '>= 0.8x',
        note: `median of ${rounds} round ratios ${ratios.map((x) => x.toFixed(2)).join(', ')}: ${ratio >= 0.8 ? 'met' : 'NOT met'}`,
      },
      await decisions(),
    ];
  } finally {
    await off?.stop();
    await on?.stop();
  }
};

export default bench;
