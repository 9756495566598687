import t from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import { noopIdentity } from '../../providers/noop/identity.ts';
import { IDENTITY_CASES, identitySuite } from '../conformance/identity.ts';
import type { Runner } from '../conformance/kit.ts';

t.test('noop identity passes the identity conformance suite', async (t) => {
  // tap's overloaded `test` does not match the kit's Runner signature in TypeScript; at runtime it is the same.
  await identitySuite(t as unknown as Runner, {
    make: async () => noopIdentity.create('noop', {}, {} as ProviderContext),
    skip: [
      {
        reason: 'noop issues no tokens or keys (capabilities tokens, api_keys, workload_tokens are false)',
        tests: [
          IDENTITY_CASES.apiKey,
          IDENTITY_CASES.oauthToken,
          IDENTITY_CASES.tokenExchange,
          IDENTITY_CASES.workloadJwks,
          IDENTITY_CASES.unknownProvider,
        ],
      },
    ],
  });
});
