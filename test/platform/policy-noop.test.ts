import t from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import { noopPolicy } from '../../providers/noop/policy.ts';
import { POLICY_CASES, policySuite } from '../conformance/policy.ts';
// tap's overloaded `test` does not match the kit's Runner signature in TypeScript; at runtime it is the same.
import type { Runner } from '../conformance/kit.ts';

// noop ignores its context; the suite only needs a fresh instance per case.
const ctx = {} as ProviderContext;

t.test('noop policy passes the policy conformance suite', async (t) => {
  await policySuite(t as unknown as Runner, {
    make: async () => noopPolicy.create('noop', {}, ctx),
    skip: [
      {
        reason: 'policy generation is a managed-cloud feature (capability generations is false on noop)',
        tests: [POLICY_CASES.generations],
      },
      {
        reason: 'noop stores policies but evaluates none (capability enforcement is false)',
        tests: [
          POLICY_CASES.authorize,
          POLICY_CASES.groups,
          POLICY_CASES.forbidWins,
          POLICY_CASES.contextCondition,
          POLICY_CASES.updateApplies,
        ],
      },
      {
        reason: 'noop does not parse policy bodies (capability validates_policies is false)',
        tests: [POLICY_CASES.badBody],
      },
    ],
  });
});
