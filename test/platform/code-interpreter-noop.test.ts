import t from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import { noopCodeInterpreter } from '../../providers/noop/code-interpreter.ts';
import { CODE_CASES, codeInterpreterSuite } from '../conformance/code-interpreter.ts';
import type { Runner } from '../conformance/kit.ts';

t.test('noop code interpreter passes the code interpreter conformance suite', async (t) => {
  // tap's overloaded `test` does not match the kit's Runner signature in TypeScript; at runtime it is the same.
  await codeInterpreterSuite(t as unknown as Runner, {
    make: async () => noopCodeInterpreter.create('noop', {}, {} as ProviderContext),
    skip: [
      {
        reason: 'noop runs no language (capability languages is empty)',
        tests: [CODE_CASES.execute, CODE_CASES.executeError, CODE_CASES.history],
      },
      { reason: 'noop keeps no files (capability files is false)', tests: [CODE_CASES.files] },
    ],
  });
});
