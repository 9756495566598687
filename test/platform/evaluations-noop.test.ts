import t from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import { noopEvaluations } from '../../providers/noop/evaluations.ts';
import { EVALUATIONS_CASES, evaluationsSuite } from '../conformance/evaluations.ts';
// tap's overloaded `test` does not match the kit's Runner signature in TypeScript; at runtime it is the same.
import type { Runner } from '../conformance/kit.ts';

const ctx = {} as ProviderContext;

t.test('noop evaluations passes the evaluations conformance suite', async (t) => {
  await evaluationsSuite(t as unknown as Runner, {
    make: async () => noopEvaluations.create('noop', {}, ctx),
    skip: [
      {
        reason: 'scores need the score-recording backend (capability scores is false on noop)',
        tests: [EVALUATIONS_CASES.scores, EVALUATIONS_CASES.scorePaging],
      },
      {
        reason: 'online configs need the managed-cloud backend (capability online_configs is false on noop)',
        tests: [EVALUATIONS_CASES.onlineConfigs],
      },
    ],
  });
});

t.test('noop evaluate is a placeholder, and says so', async (t) => {
  const p = await noopEvaluations.create('noop', {}, ctx);
  const out = await p.evaluate({ evaluator_id: 'Builtin.Helpfulness', target: 'tr' });
  t.equal(out.placeholder, true);
  t.match(out.results, [{ name: 'Builtin.Helpfulness', value: 0, explanation: /Placeholder/ }]);
});
