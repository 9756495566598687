import t from 'tap';
import type { ProviderContext } from '../../core/provider.ts';
import { noopObservability } from '../../providers/noop/observability.ts';
import { observabilitySuite } from '../conformance/observability.ts';
// tap's overloaded `test` does not match the kit's Runner signature in TypeScript; at runtime it is the same.
import type { Runner } from '../conformance/kit.ts';

const ctx = {} as ProviderContext;

t.test('noop observability passes the observability conformance suite', async (t) => {
  await observabilitySuite(t as unknown as Runner, { make: async () => noopObservability.create('noop', {}, ctx) });
});

t.test('max_records bounds what noop keeps, dropping the oldest', async (t) => {
  const p = await noopObservability.create('noop', { max_records: 2 }, ctx);
  for (const id of ['a', 'b', 'c']) await p.ingestTrace({ trace_id: id });
  const list = await p.listTraces!({ limit: 50, offset: 0 });
  t.same(
    list.traces.map((x) => x.trace_id),
    ['c', 'b'],
  );
  t.equal(await p.getTrace!('a'), undefined, 'oldest dropped');
});
