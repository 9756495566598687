import t from 'tap';
import { deepFreeze } from '../../core/deep-frozen.ts';
import { MEMO_MAX_CHARS, memoizeFrozen } from '../../plugins/ops/serialize-memo.ts';

function counting() {
  const calls: unknown[] = [];
  const serialize = memoizeFrozen((data) => {
    calls.push(data);
    return JSON.stringify(data);
  });
  return { calls, serialize };
}

t.test('a deep-frozen value is written once, and the same text comes back', async (t) => {
  const { calls, serialize } = counting();
  const record = deepFreeze({ key: 'k', metadata: { n: 1 } });
  const first = serialize(record);
  t.equal(serialize(record), first);
  t.equal(serialize(record), '{"key":"k","metadata":{"n":1}}');
  t.equal(calls.length, 1);
  // Another frozen value with equal content is its own entry: identity, not content, is the key.
  const twin = deepFreeze({ key: 'k', metadata: { n: 1 } });
  t.equal(serialize(twin), first);
  t.equal(calls.length, 2);
});

t.test('values that can change are written every time', async (t) => {
  const { calls, serialize } = counting();
  const open = { key: 'k' };
  t.equal(serialize(open), '{"key":"k"}');
  open.key = 'changed';
  t.equal(serialize(open), '{"key":"changed"}', 'a plain object is read afresh');
  const shallow = Object.freeze({ inner: { n: 1 } });
  serialize(shallow);
  shallow.inner.n = 2;
  t.equal(serialize(shallow), '{"inner":{"n":2}}', 'a top-level freeze is not enough');
  serialize('text');
  serialize(null);
  t.equal(calls.length, 6);
});

t.test('text longer than the cap is not kept', async (t) => {
  const { calls, serialize } = counting();
  const big = deepFreeze({ content: 'x'.repeat(MEMO_MAX_CHARS) });
  serialize(big);
  serialize(big);
  t.equal(calls.length, 2);
});
