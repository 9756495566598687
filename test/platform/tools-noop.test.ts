import t from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import { noopTools } from '../../providers/noop/tools.ts';
import type { Runner } from '../conformance/kit.ts';
import { TOOLS_CASES, toolsSuite } from '../conformance/tools.ts';

t.test('noop tools passes the tools conformance suite', async (t) => {
  // tap's overloaded `test` does not match the kit's Runner signature in TypeScript; at runtime it is the same.
  await toolsSuite(t as unknown as Runner, {
    make: async () => noopTools.create('noop', {}, {} as ProviderContext),
    skip: [
      {
        reason: 'noop cannot run tools (capability invoke is false)',
        tests: [TOOLS_CASES.invoke, TOOLS_CASES.invokeFailure, TOOLS_CASES.invokeUnknown, TOOLS_CASES.invokeDenied],
      },
      { reason: 'noop has no MCP server management (capability servers is false)', tests: [TOOLS_CASES.servers] },
    ],
  });
});
